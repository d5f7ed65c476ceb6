package pypi

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that hostile text never panics the parsers and that a
// parsed marker's normal form parses to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`requests[socks]>=2.31,<3; python_version < "3.12" and (os_name == 'posix' or extra == "x")`,
		"==1.2.*", "~=1.4.5a4", "1!2.0b3.post4.dev5+ubuntu.1", "'a' in extras", "p @ https://x/y.whl",
		"((((", "name (", "x[", "===", "\x00", "v", "1.0+", "os_name not in 'nt'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseVersion(s)
		if ss, err := ParseSpecifiers(s); err == nil {
			v, _ := ParseVersion("1.0")
			ss.Contains(v, true)
		}
		_, _ = ParseRequirement(s)
		m, err := ParseMarker(s)
		if err != nil {
			return
		}
		_, _ = m.Evaluate(oracleEnv, "x")
		again, err := ParseMarker(m.String())
		if err != nil {
			t.Fatalf("ParseMarker(%q) = %q, which does not parse: %v", s, m.String(), err)
		}
		if again.String() != m.String() {
			t.Fatalf("ParseMarker(%q): %q then %q", s, m.String(), again.String())
		}
	})
}

// FuzzReadRequirements reads hostile requirements files: an error or an
// input, never a panic nor a hang.
func FuzzReadRequirements(f *testing.F) {
	f.Add([]byte("six==1.0 --hash=sha256:4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274\n-r r.txt\n"))
	f.Add([]byte("-c c.txt \\\n  # x\nidna; os_name == 'nt' \\\n"))
	f.Add([]byte("--index-url https://u:p@h/s\n-e .\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "r.txt")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = ReadRequirements(context.Background(), p)
	})
}
