package lock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

func sample() *File {
	return &File{
		Artifacts: []Artifact{
			{Coord: "org.b:b:2", File: "org.b_b-2.jar", Sha256: strings.Repeat("b", 64), Size: 2},
			{Coord: "org.a:a:1", File: "org.a_a-1.jar", Sha256: strings.Repeat("a", 64), Size: 1},
		},
		Inputs: Inputs{Conflict: ConflictLatest, Packages: []string{"org.b:b:2"}},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "prebake.lock")
	l := sample()
	if err := Write(path, l); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l, got); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s", diff)
	}
	if got.Artifacts[0].File != "org.a_a-1.jar" || got.LockHash != got.Hash() || got.Version != SchemaVersion {
		t.Errorf("normalized lock: %+v", got)
	}
	if got.Inputs.InputsHash != ComputeInputsHash(got.Inputs) {
		t.Errorf("inputsHash %s, want %s", got.Inputs.InputsHash, ComputeInputsHash(got.Inputs))
	}
}

func TestParseRefuses(t *testing.T) {
	l := sample()
	l.Normalize()
	good, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, data string
		want       errdefs.Kind
	}{
		{"edited hash", strings.Replace(string(good), strings.Repeat("a", 64), strings.Repeat("c", 64), 1), errdefs.Invalid},
		{"unknown field", strings.Replace(string(good), `"version"`, `"extra": 1, "version"`, 1), errdefs.Invalid},
		{"bad file name", strings.Replace(string(good), "org.a_a-1.jar", "../x.jar", 1), errdefs.Invalid},
		{"other version", strings.Replace(string(good), `"version": 1`, `"version": 2`, 1), errdefs.Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.lock", []byte(tc.data))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "x.lock") {
				t.Errorf("Parse: %v, want a %v error naming the file", err, tc.want)
			}
		})
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none.lock")); !errors.Is(err, os.ErrNotExist) || !errors.Is(err, errdefs.NotFound) {
		t.Errorf("Read of a missing lock: %v", err)
	}
}

func TestLocalJars(t *testing.T) {
	paths, err := LocalJars([]string{"/a.jar"})(t.Context())
	if err != nil || len(paths) != 1 || paths[0] != "/a.jar" {
		t.Errorf("LocalJars = %v, %v", paths, err)
	}
}

// signedBy is optional (old locks stay valid), checked when present, and
// outside the lock hash.
func TestSignedBy(t *testing.T) {
	plain := sample()
	plain.Normalize()
	signed := sample()
	fp := strings.Repeat("AB12", 10)
	signed.Artifacts[0].SignedBy = fp
	signed.Normalize()
	if plain.Hash() != signed.Hash() {
		t.Errorf("signedBy changed the lock hash: %s vs %s", plain.Hash(), signed.Hash())
	}
	data, err := signed.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"signedBy": "`+fp+`"`) {
		t.Errorf("no signedBy in\n%s", data)
	}
	if got, err := Parse("s.lock", data); err != nil || got.Artifacts[1].SignedBy != fp {
		t.Errorf("Parse: %v, %+v", err, got)
	}
	old, _ := plain.Marshal()
	if strings.Contains(string(old), "signedBy") {
		t.Errorf("a lock without signatures carries signedBy:\n%s", old)
	}
	for _, bad := range []string{"ab12", strings.ToLower(fp), strings.Repeat("G", 40)} {
		b := strings.Replace(string(data), fp, bad, 1)
		if _, err := Parse("s.lock", []byte(b)); !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), "signedBy") {
			t.Errorf("signedBy %q: %v, want invalid naming signedBy", bad, err)
		}
	}
}

// TestCheckIvy: inputs.ivy is absent (2.5.2/2.5.3), "2.5.1" or "2.6.0".
func TestCheckIvy(t *testing.T) {
	for _, tc := range []struct {
		ivy string
		ok  bool
	}{{"", true}, {"2.5.1", true}, {"2.6.0", true}, {"2.5.3", false}, {"2.7.0", false}, {"2.6.0\n", false}} {
		l := sample()
		l.Inputs.Ivy = tc.ivy
		err := l.Check()
		if (err == nil) != tc.ok || (err != nil && (!errors.Is(err, ErrBadLock) || !strings.Contains(err.Error(), "inputs.ivy"))) {
			t.Errorf("Check with inputs.ivy %q: %v, want ok = %v (else ErrBadLock naming inputs.ivy)", tc.ivy, err, tc.ok)
		}
	}
}
