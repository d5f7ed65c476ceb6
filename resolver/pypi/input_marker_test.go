package pypi

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oracleEnv is the environment the expectations of TestMarkerEvaluate
// were recorded in, with packaging 21.3 (pip 23.2.1's copy):
// Marker(m).evaluate(env | {"extra": extra}).
var oracleEnv = Env{
	PythonVersion: "3.11", PythonFullVersion: "3.11.7", SysPlatform: "linux", PlatformMachine: "x86_64",
	PlatformSystem: "Linux", PlatformRelease: "6.1.0-13-amd64", PlatformVersion: "#1 SMP",
	PlatformPythonImplementation: "CPython", ImplementationName: "cpython", ImplementationVersion: "3.11.7",
	OSName: "posix",
}

func TestMarkerEvaluate(t *testing.T) {
	for _, tc := range []struct {
		marker, extra string
		want          bool
	}{
		{`python_version < "3.12"`, "", true},
		{`python_version >= "3.12"`, "", false},
		{`python_full_version >= '3.11.4'`, "", true},
		{`python_full_version == '3.11.*'`, "", true},
		{`python_version > '3.11'`, "", false},
		{`python_version ~= '3.10'`, "", true},
		{`'3.10' < python_version`, "", true},
		{`sys_platform == 'linux'`, "", true},
		{`sys_platform == 'win32'`, "", false},
		{`sys_platform != 'darwin' and platform_machine == 'x86_64'`, "", true},
		{`platform_machine == 'aarch64' or platform_machine == 'x86_64'`, "", true},
		{`platform_system == 'Windows' or (python_version < '3.12' and os_name == 'posix')`, "", true},
		{`'linux' in sys_platform`, "", true},
		{`'win' not in sys_platform`, "", true},
		{`implementation_name == 'pypy'`, "", false},
		{`extra == 'arrow'`, "arrow", true},
		{`extra == 'arrow'`, "", false},
		{`python_version < '3.12' and extra == 'test'`, "test", true},
		{`platform_release >= '6'`, "", false}, // not a version: matches nothing
		{`implementation_version >= '3.11.0a1'`, "", true},
		{`os.name == 'posix'`, "", true},
		{`platform_python_implementation == 'CPython' and python_version >= '3.8' and python_version < '4'`, "", true},
		// PEP 685 (packaging 22 on): extras compare normalized;
		// packaging 21.3 said false.
		{`extra == 'Arrow_Extra'`, "arrow-extra", true},
		// packaging 26 (#939): ordered comparisons of strings that are
		// not versions: < and > never hold, <= and >= are ==.
		{`sys_platform < 'zzz'`, "", false},
		{`sys_platform >= 'linux'`, "", true},
		// "and" binds tighter than "or".
		{`sys_platform == 'win32' and python_version < '3' or os_name == 'posix'`, "", true},
		{`sys_platform == 'win32' and (python_version < '3' or os_name == 'posix')`, "", false},
		{``, "", true},
	} {
		m, err := ParseMarker(tc.marker)
		if err != nil {
			t.Errorf("ParseMarker(%q): %v", tc.marker, err)
			continue
		}
		got, err := m.Evaluate(oracleEnv, tc.extra)
		if err != nil {
			t.Errorf("Evaluate(%q): %v", tc.marker, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Evaluate(%q, extra %q) = %v, want %v", tc.marker, tc.extra, got, tc.want)
		}
	}
}

func TestMarkerSets(t *testing.T) {
	env := LinuxEnv("3.12.4", "aarch64")
	env.Extras = []string{"Arrow"}
	for _, tc := range []struct {
		marker string
		want   bool
	}{
		{`'arrow' in extras`, true},
		{`'ARROW' in extras`, true},
		{`'dev' in dependency_groups`, false},
		{`'dev' not in dependency_groups`, true},
		{`python_full_version >= '3.12' and platform_machine == 'aarch64'`, true},
		{`python_version == '3.12'`, true},
	} {
		m, err := ParseMarker(tc.marker)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Evaluate(env, "")
		if err != nil || got != tc.want {
			t.Errorf("Evaluate(%q) = %v, %v; want %v", tc.marker, got, err, tc.want)
		}
	}
}

func TestMarkerString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`python_version<'3.12'`, `python_version < "3.12"`},
		{`(os_name=="posix" or sys_platform=='win32') and extra == "x"`, `(os_name == "posix" or sys_platform == "win32") and extra == "x"`},
		{`sys.platform == 'linux'`, `sys_platform == "linux"`},
		{`platform_version == 'a"b'`, `platform_version == 'a"b'`},
		{`os_name not  in 'nt java'`, `os_name not in "nt java"`},
	} {
		m, err := ParseMarker(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, m.String()); diff != "" {
			t.Errorf("ParseMarker(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestMarkerErrors(t *testing.T) {
	deep := ""
	for range 40 {
		deep += "("
	}
	deep += "os_name == 'posix'"
	for range 40 {
		deep += ")"
	}
	for _, in := range []string{
		`python_version`, `python_version <`, `python_version < '3`, `foo == 'bar'`, `'a' == 'b'`,
		`os_name = 'posix'`, `(os_name == 'posix'`, `os_name == 'posix')`, `os_name not 'posix'`,
		`os_name == 'posix' and`, `os_name == 'posix' xor os_name == 'nt'`, deep,
	} {
		if _, err := ParseMarker(in); !errors.Is(err, ErrMarker) {
			t.Errorf("ParseMarker(%q) = %v, want ErrMarker", in, err)
		}
	}
	for _, in := range []string{`sys_platform ~= 'linux'`, `extras == 'x'`, `extras in 'x'`} {
		m, err := ParseMarker(in)
		if err != nil {
			t.Fatalf("ParseMarker(%q): %v", in, err)
		}
		if _, err := m.Evaluate(oracleEnv, ""); !errors.Is(err, ErrMarker) {
			t.Errorf("Evaluate(%q) = %v, want ErrMarker", in, err)
		}
	}
}
