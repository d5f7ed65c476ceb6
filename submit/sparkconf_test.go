package submit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParsePropsEscapes follows java.util.Properties.loadConvert: \uXXXX
// yields UTF-16 code units (a surrogate pair is one character), and a
// malformed \uxxxx throws IllegalArgumentException("Malformed \uxxxx
// encoding."), which Utils.getPropertiesFromFile does not catch: spark-submit
// fails, so reading the file is an error here too.
func TestParsePropsEscapes(t *testing.T) {
	p := parseProps([]byte("spark.app.name=\\uD83D\\uDE00 x\\u00e9\nk\\:ey = v\\\\\n"))
	if got, _ := p.Get("spark.app.name"); got != "\U0001F600 x\u00e9" {
		t.Errorf("surrogate pair: got %q", got)
	}
	if got, _ := p.Get("k:ey"); got != `v\` {
		t.Errorf("escaped separator: got %q", got)
	}
	dir := t.TempDir()
	for _, bad := range []string{"spark.jars.packages=\\u00zz\n", "a=\\u12\n", "\\uXYZW=b\n"} {
		f := filepath.Join(dir, "bad.conf")
		if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readProps(f); err == nil || !strings.Contains(err.Error(), "uxxxx") {
			t.Errorf("readProps(%q) = %v; want a malformed \\uxxxx error", bad, err)
		}
	}
}

// TestPropsFileLastWins: Get is the last definition of a key (trimmed as
// Spark trims), Keys the keys in the order of their first definition, and
// SparkConf the argv's --conf over the file's last definitions.
func TestPropsFileLastWins(t *testing.T) {
	p := parseProps([]byte("spark.a=1\nspark.b = 2\n# spark.a=comment\nspark.a=\\u0020 3 \\t\nother=x\nspark.b=4\n"))
	got := map[string]any{"keys": p.Keys()}
	for _, k := range []string{"spark.a", "spark.b", "other", "missing"} {
		v, ok := p.Get(k)
		got[k] = []any{v, ok}
	}
	want := map[string]any{
		"keys":    []string{"spark.a", "spark.b", "other"},
		"spark.a": []any{"3", true}, // \u0020 and \t are trimmed too (trimExceptCRLF)
		"spark.b": []any{"4", true},
		"other":   []any{"x", true},
		"missing": []any{"", false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PropsFile (-want +got):\n%s", diff)
	}
	var nilFile *PropsFile
	if _, ok := nilFile.Get("spark.a"); ok || nilFile.Keys() != nil {
		t.Errorf("a nil PropsFile defines keys")
	}
}

// bigPropsFile writes n spark.xI keys of about 100 bytes each (audit 4,
// M3: 150,000 of them are 15.6 MB, under MaxPropsFileSize) and returns
// its path.
func bigPropsFile(t testing.TB, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		k := fmt.Sprintf("spark.x%d=", i)
		b.WriteString(k + strings.Repeat("v", 103-len(k)) + "\n")
	}
	b.WriteString("spark.x0=last\n") // a redefinition: the last one wins
	p := filepath.Join(t.TempDir(), "big.properties")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBigPropsFileLinear reproduces audit 4, M3: SparkConf of a
// 150,000-key properties file took 38 s of CPU (103 s on a loaded host),
// as Get scanned every entry for every key. It is linear now: well under
// a second on an idle machine; the bound is generous for a loaded one.
func TestBigPropsFileLinear(t *testing.T) {
	const n = 150_000
	path := bigPropsFile(t, n)
	start := time.Now()
	s, err := LoadSubmission([]string{"--master", "k8s://https://127.0.0.1:6443", "--properties-file", path, "--class", "C", "local:///opt/app.jar"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	conf := s.SparkConf()
	d := time.Since(start)
	t.Logf("%d keys: LoadSubmission + SparkConf in %v", n, d)
	if len(conf) != n || conf["spark.x0"] != "last" || conf["spark.x149999"] == "" {
		t.Errorf("SparkConf: %d keys, spark.x0=%q", len(conf), conf["spark.x0"])
	}
	if d > 10*time.Second {
		t.Errorf("a %d-key properties file took %v to load, want well under 10s (linear)", n, d)
	}
}

func BenchmarkSparkConfBigPropsFile(b *testing.B) {
	path := bigPropsFile(b, 150_000)
	for b.Loop() {
		s, err := LoadSubmission([]string{"--properties-file", path, "app.jar"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.SparkConf()
	}
}
