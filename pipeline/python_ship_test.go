package pipeline

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/submit/rewrite"
)

// TestCheckImagePython: an image baked earlier holds the lock's wheels
// when its dev.prebake.python lists every one; else the set is not held
// (66: bake it first).
func TestCheckImagePython(t *testing.T) {
	lf, err := lock.Read("../testdata/lockdiff/python.lock")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, w := range lf.Wheels() {
		files = append(files, w.File)
	}
	if len(files) == 0 {
		t.Fatal("the test lock has no wheels")
	}
	ann := func(files ...string) *layers.Info {
		return &layers.Info{Annotations: map[string]string{layers.AnnotationPython: pythonAnnotationJSON(t, files)}}
	}
	got, err := checkImagePython("r/i:1", ann(files...), lf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&rewrite.Python{Wheels: len(files), InImage: true, From: "image r/i:1"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for name, info := range map[string]*layers.Info{
		"a wheel missing": ann(files[1:]...),
		"no annotation":   {Annotations: map[string]string{}},
	} {
		if _, err := checkImagePython("r/i:1", info, lf); !errors.Is(err, ErrNotHeld) || errdefs.KindOf(err) != errdefs.NotFound {
			t.Errorf("%s: %v, want ErrNotHeld (not found)", name, err)
		}
	}
	if _, err := checkImagePython("r/i:1", &layers.Info{Annotations: map[string]string{layers.AnnotationPython: "{"}}, lf); errdefs.KindOf(err) != errdefs.Invalid {
		t.Errorf("a bad annotation: %v, want invalid", err)
	}
}

func pythonAnnotationJSON(t *testing.T, files []string) string {
	t.Helper()
	b, err := json.Marshal(layers.PythonAnnotation{Dir: layers.DefaultPythonDir, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
