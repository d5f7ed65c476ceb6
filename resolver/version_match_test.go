package resolver

import "testing"

func TestMatchRevision(t *testing.T) {
	tests := []struct {
		asked, found string
		dynamic      bool
		want         bool
	}{
		{"[1.0,2.0)", "1.0", true, true},
		{"[1.0,2.0)", "1.9.9", true, true},
		{"[1.0,2.0)", "2.0", true, false},
		{"(1.0,2.0]", "1.0", true, false},
		{"(1.0,2.0]", "2.0", true, true},
		{"]1.0,1.10[", "1.10-rc1", true, true},
		{"]1.0,1.10[", "1.10", true, false},
		{"[ 1.0 , 2.0 ]", "1.5", true, true},
		{"(,1.2]", "1.2", true, true},
		{"(,1.2]", "1.10", true, false},
		{"(,1.2)", "1.2", true, false},
		{"[1.5,)", "3.0", true, true},
		{"[1.5,)", "1.4", true, false},
		{"(1.5,)", "1.5", true, false},
		{"1.+", "1.10", true, true},
		{"1.+", "10.0", true, false},
		{"1.0+", "1.0.1", true, true},
		{"latest.integration", "9", true, true},
		{"latest.release", "2.0-SNAPSHOT", true, true}, // the status is checked on the descriptor
		{"1.0", "1.0", false, true},
		{"[1.0]", "1.0", false, false}, // not a range: normalized to 1.0 first
		{"1.0", "1.0.0", false, false},
	}
	for _, tt := range tests {
		if got := IsDynamicRevision(tt.asked); got != tt.dynamic {
			t.Errorf("IsDynamicRevision(%q) = %v, want %v", tt.asked, got, tt.dynamic)
		}
		if got := MatchRevision(tt.asked, tt.found); got != tt.want {
			t.Errorf("MatchRevision(%q, %q) = %v, want %v", tt.asked, tt.found, got, tt.want)
		}
	}
}

func TestNormalizeRevision(t *testing.T) {
	for in, want := range map[string]string{"[1.0]": "1.0", "[1.0,2.0]": "[1.0,2.0]", "[revision]": "[revision]", "1.0": "1.0", "[": "["} {
		if got := NormalizeRevision(in); got != want {
			t.Errorf("NormalizeRevision(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLatestStatus(t *testing.T) {
	tests := []struct {
		asked, version string
		need, want     bool
	}{
		{"latest.release", "1.0", true, true},
		{"latest.release", "1.0-SNAPSHOT", true, false},
		{"latest.milestone", "1.0", true, true},
		{"latest.milestone", "1.0-SNAPSHOT", true, false},
		{"latest.integration", "1.0-SNAPSHOT", false, true},
	}
	for _, tt := range tests {
		if got := needsStatus(tt.asked); got != tt.need {
			t.Errorf("needsStatus(%q) = %v", tt.asked, got)
		}
		if got := acceptStatus(tt.asked, pomStatus(tt.version)); got != tt.want {
			t.Errorf("acceptStatus(%q, %q) = %v, want %v", tt.asked, tt.version, got, tt.want)
		}
	}
}
