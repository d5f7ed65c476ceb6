package pypi

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

// TestVersions: the versions with a wheel for the target, oldest first
// in PEP 440 order: no sdist-only, yanked, other-platform or
// too-new-Python version, and pre-releases only when asked for.
func TestVersions(t *testing.T) {
	ix := newFakeIndex(t, false)
	add := func(file string, f fakeFile) {
		f.name = file
		f.body = []byte(file)
		ix.add("demo", f)
	}
	add("demo-1.0-py3-none-any.whl", fakeFile{})
	add("demo-1.10-py3-none-any.whl", fakeFile{})
	add("demo-1.9-cp311-cp311-manylinux_2_17_x86_64.whl", fakeFile{})
	add("demo-1.11-cp311-cp311-macosx_11_0_arm64.whl", fakeFile{})
	add("demo-1.12.tar.gz", fakeFile{})
	add("demo-1.13-py3-none-any.whl", fakeFile{yanked: true})
	add("demo-1.14-py3-none-any.whl", fakeFile{requiresPython: ">=3.12"})
	add("demo-2.0rc1-py3-none-any.whl", fakeFile{})
	r, _ := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()})
	for _, pre := range []bool{false, true} {
		vs, err := r.Versions(context.Background(), "Demo", testTarget, pre)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range vs {
			got = append(got, v.String())
		}
		want := []string{"1.0", "1.9", "1.10"}
		if pre {
			want = append(want, "2.0rc1")
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("pre %v (-want +got):\n%s", pre, d)
		}
	}
	if _, err := r.Versions(context.Background(), "nothere", testTarget, false); !errors.Is(err, errdefs.NotFound) {
		t.Errorf("nothere: %v, want NotFound", err)
	}
}
