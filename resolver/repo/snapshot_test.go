package repo

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTimestampedVersion(t *testing.T) {
	meta := []byte(`<?xml version="1.0"?><metadata><version>2.0.2-SNAPSHOT</version><versioning>
<snapshot><timestamp>20070310.181613</timestamp><buildNumber>3</buildNumber></snapshot></versioning></metadata>`)
	noTS := []byte(`<metadata><versioning><snapshot><localCopy>true</localCopy></snapshot></versioning></metadata>`)
	for _, tc := range []struct {
		name, version string
		meta          []byte
		want          string
		ok            bool
	}{
		{"timestamped", "2.0.2-SNAPSHOT", meta, "2.0.2-20070310.181613-3", true},
		{"release", "2.0.2", meta, "", false},
		{"local copy", "2.0.2-SNAPSHOT", noTS, "", false},
		{"malformed", "2.0.2-SNAPSHOT", []byte("<metadata"), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TimestampedVersion(tc.version, tc.meta)
			if got != tc.want || ok != tc.ok {
				t.Errorf("TimestampedVersion(%q) = %q, %v; want %q, %v", tc.version, got, ok, tc.want, tc.ok)
			}
			names := snapshotFileNames("x", tc.version, "", "jar", func() ([]byte, error) { return tc.meta, nil })
			want := []string{"x-" + tc.version + ".jar"}
			if tc.ok {
				want = append([]string{"x-" + tc.want + ".jar"}, want...)
			}
			if d := cmp.Diff(want, names); d != "" {
				t.Errorf("file names (-want +got):\n%s", d)
			}
		})
	}
}
