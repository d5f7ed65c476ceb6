package maven

import (
	"testing"

	"github.com/vifraa/gopom"
)

// The expectations are the oracle's (testdata/parity/cases/synth-profile-*).
func TestProfileActivation(t *testing.T) {
	sp := func(s string) *string { return &s }
	env := DefaultProfileEnv()
	props := map[string]string{"enable.x": "yes", "java.version": ""}
	for _, tc := range []struct {
		name string
		a    *gopom.Activation
		want bool
	}{
		{"none", nil, false},
		{"jdk 17", &gopom.Activation{JDK: sp("17")}, true},
		{"jdk 1.8 is no lower bound", &gopom.Activation{JDK: sp("1.8")}, false},
		{"jdk !1.8", &gopom.Activation{JDK: sp("!1.8")}, true},
		{"jdk [11,)", &gopom.Activation{JDK: sp("[11,)")}, true},
		{"jdk (17,18]", &gopom.Activation{JDK: sp("(17,18]")}, false},
		{"jdk (,17]", &gopom.Activation{JDK: sp("(,17]")}, true},
		{"jdk two ranges", &gopom.Activation{JDK: sp("(,1.8],[17,17]")}, true},
		{"os family unix", &gopom.Activation{OS: &gopom.ActivationOS{Family: sp("unix")}}, false},
		{"os name Linux arch amd64", &gopom.Activation{OS: &gopom.ActivationOS{Name: sp("Linux"), Arch: sp("amd64")}}, true},
		{"os name linux", &gopom.Activation{OS: &gopom.ActivationOS{Name: sp("linux")}}, false},
		{"property defined", &gopom.Activation{Property: &gopom.ActivationProperty{Name: sp("enable.x")}}, true},
		{"property value", &gopom.Activation{Property: &gopom.ActivationProperty{Name: sp("enable.x"), Value: sp("no")}}, false},
		{"property !undefined", &gopom.Activation{Property: &gopom.ActivationProperty{Name: sp("!nope")}}, true},
		{"property system", &gopom.Activation{Property: &gopom.ActivationProperty{Name: sp("java.version")}}, true},
		{"file exists", &gopom.Activation{File: &gopom.ActivationFile{Exists: sp("/")}}, true},
		{"file missing", &gopom.Activation{File: &gopom.ActivationFile{Missing: sp("/")}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := env.Active(tc.a, props); got != tc.want {
				t.Errorf("Active = %v, want %v", got, tc.want)
			}
		})
	}
}
