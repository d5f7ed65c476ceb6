package lock

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

// TestParseNamesTheField: every malformed lock is bad input (65) whose
// message names the field at fault; a malformed inputsHash is one too
// (it read as a stale lock, 78, before).
func TestParseNamesTheField(t *testing.T) {
	l := sample()
	l.Normalize()
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	good := string(data)
	cases := []struct{ name, old, new, field string }{
		{"unknown top field", `"version"`, `"signature": "x", "version"`, `unknown field "signature"`},
		{"unknown inputs field", `"conflict"`, `"mirror": "x", "conflict"`, `unknown field "mirror"`},
		{"unknown artifact field", `"coord"`, `"signer": "x", "coord"`, `unknown field "signer"`},
		{"sha256 not hex", strings.Repeat("a", 64), strings.Repeat("z", 64), "sha256"},
		{"sha256 short", strings.Repeat("a", 64), "aa", "sha256"},
		{"file escaping", "org.a_a-1.jar", "../../a.jar", "file"},
		{"coord with a slash", "org.a:a:1", "org.a:../a:1", "coord"},
		{"negative size", `"size": 1`, `"size": -1`, "size"},
		{"inputsHash not hex", l.Inputs.InputsHash, strings.Repeat("Z", 64), "inputs.inputsHash"},
		{"inputsHash empty", l.Inputs.InputsHash, "", "inputs.inputsHash"},
		{"lockHash not hex", l.LockHash, strings.Repeat("G", 64), "lockHash"},
		{"lockHash edited", l.LockHash, strings.Repeat("0", 64), "lockHash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(good, c.old, c.new, 1)
			if bad == good {
				t.Fatalf("%q is not in the lock", c.old)
			}
			_, err := Parse("x.lock", []byte(bad))
			type outcome struct {
				Kind  errdefs.Kind
				Named bool
			}
			got := outcome{errdefs.KindOf(err), err != nil && strings.Contains(err.Error(), c.field)}
			if diff := cmp.Diff(outcome{errdefs.Invalid, true}, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%v", diff, err)
			}
		})
	}
	if _, err := Parse("x.lock", data); err != nil {
		t.Errorf("good lock: %v", err)
	}
	if err := (&File{}).CheckHashes(); !errors.Is(err, ErrBadLock) {
		t.Errorf("empty lock: %v", err)
	}
}
