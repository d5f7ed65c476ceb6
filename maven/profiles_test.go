package maven

import (
	"testing"
)

// The expectations are the oracle's (testdata/parity/cases/synth-profile-*).
func TestProfileActivation(t *testing.T) {
	sp := func(s string) *string { return &s }
	env := DefaultProfileEnv()
	props := map[string]string{"enable.x": "yes", "java.version": ""}
	for _, tc := range []struct {
		name string
		a    *activation
		want bool
	}{
		{"none", nil, false},
		{"jdk 17", &activation{JDK: sp("17")}, true},
		{"jdk 1.8 is no lower bound", &activation{JDK: sp("1.8")}, false},
		{"jdk !1.8", &activation{JDK: sp("!1.8")}, true},
		{"jdk [11,)", &activation{JDK: sp("[11,)")}, true},
		{"jdk (17,18]", &activation{JDK: sp("(17,18]")}, false},
		{"jdk (,17]", &activation{JDK: sp("(,17]")}, true},
		{"jdk two ranges", &activation{JDK: sp("(,1.8],[17,17]")}, true},
		{"os family unix", &activation{OS: &activationOS{Family: sp("unix")}}, false},
		{"os name Linux arch amd64", &activation{OS: &activationOS{Name: sp("Linux"), Arch: sp("amd64")}}, true},
		{"os name linux", &activation{OS: &activationOS{Name: sp("linux")}}, false},
		{"property defined", &activation{Property: &activationProperty{Name: "enable.x"}}, true},
		{"property value", &activation{Property: &activationProperty{Name: "enable.x", Value: "no"}}, false},
		{"property !undefined", &activation{Property: &activationProperty{Name: "!nope"}}, true},
		{"property system", &activation{Property: &activationProperty{Name: "java.version"}}, true},
		{"file exists", &activation{File: &activationFile{Exists: "/"}}, true},
		{"file missing", &activation{File: &activationFile{Missing: "/"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := env.active(tc.a, props); got != tc.want {
				t.Errorf("active = %v, want %v", got, tc.want)
			}
		})
	}
}
