package lockdiff_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/lockdiff"
	"github.com/prebake/prebake/lock"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const testdata = "../../testdata/lockdiff"

func sha(c byte) string { return strings.Repeat(string(c), 64) }

func art(coord, repo string, shaChar byte) lock.Artifact {
	p := strings.Split(coord, ":")
	file := p[0] + "_" + p[1] + "-" + p[2]
	if len(p) == 4 {
		file += "-" + p[3]
	}
	return lock.Artifact{Coord: coord, File: file + ".jar", Repository: repo, Sha256: sha(shaChar), Size: 10}
}

func lf(in lock.Inputs, arts ...lock.Artifact) *lock.File {
	l := &lock.File{Inputs: in, Artifacts: arts}
	l.Normalize()
	return l
}

const r1, r2 = "https://repo.example.com/m2/", "https://mirror.example.com/m2/"

func TestCompareModules(t *testing.T) {
	in := lock.Inputs{Conflict: "latest", Packages: []string{"g:a:1"}, Repositories: []string{r1}}
	tests := []struct {
		name     string
		old, new []lock.Artifact
		want     []lockdiff.ModuleChange
		summary  lockdiff.Summary
	}{
		{
			name: "equal",
			old:  []lock.Artifact{art("g:a:1", r1, 'a')},
			new:  []lock.Artifact{art("g:a:1", r1, 'a')},
			want: []lockdiff.ModuleChange{},
		},
		{
			name:    "added and removed",
			old:     []lock.Artifact{art("g:a:1", r1, 'a')},
			new:     []lock.Artifact{art("g:b:1", r1, 'b')},
			want:    []lockdiff.ModuleChange{{Module: "g:a", Changes: []string{"removed"}, Old: ptr(art("g:a:1", r1, 'a'))}, {Module: "g:b", Changes: []string{"added"}, New: ptr(art("g:b:1", r1, 'b'))}},
			summary: lockdiff.Summary{Added: 1, Removed: 1},
		},
		{
			name:    "upgrade by Ivy order, not string order",
			old:     []lock.Artifact{art("g:a:1.9", r1, 'a')},
			new:     []lock.Artifact{art("g:a:1.10", r1, 'b')},
			want:    []lockdiff.ModuleChange{{Module: "g:a", Changes: []string{"upgrade"}, Old: ptr(art("g:a:1.9", r1, 'a')), New: ptr(art("g:a:1.10", r1, 'b'))}},
			summary: lockdiff.Summary{Upgraded: 1},
		},
		{
			name:    "downgrade from a release to an RC",
			old:     []lock.Artifact{art("g:a:2.0", r1, 'a')},
			new:     []lock.Artifact{art("g:a:2.0-rc1", r1, 'b')},
			want:    []lockdiff.ModuleChange{{Module: "g:a", Changes: []string{"downgrade"}, Old: ptr(art("g:a:2.0", r1, 'a')), New: ptr(art("g:a:2.0-rc1", r1, 'b'))}},
			summary: lockdiff.Summary{Downgraded: 1},
		},
		{
			name:    "same version, new content and repository",
			old:     []lock.Artifact{art("g:a:1", r1, 'a')},
			new:     []lock.Artifact{art("g:a:1", r2, 'b')},
			want:    []lockdiff.ModuleChange{{Module: "g:a", Changes: []string{"content", "repository"}, Old: ptr(art("g:a:1", r1, 'a')), New: ptr(art("g:a:1", r2, 'b'))}},
			summary: lockdiff.Summary{ContentChanged: 1, RepositoryChanged: 1},
		},
		{
			name:    "repository only",
			old:     []lock.Artifact{art("g:a:1", r1, 'a')},
			new:     []lock.Artifact{art("g:a:1", r2, 'a')},
			want:    []lockdiff.ModuleChange{{Module: "g:a", Changes: []string{"repository"}, Old: ptr(art("g:a:1", r1, 'a')), New: ptr(art("g:a:1", r2, 'a'))}},
			summary: lockdiff.Summary{RepositoryChanged: 1},
		},
		{
			name:    "classifiers are separate modules",
			old:     []lock.Artifact{art("g:a:1", r1, 'a'), art("g:a:1:jdk15", r1, 'b')},
			new:     []lock.Artifact{art("g:a:1", r1, 'a'), art("g:a:2:jdk15", r1, 'c')},
			want:    []lockdiff.ModuleChange{{Module: "g:a:jdk15", Changes: []string{"upgrade"}, Old: ptr(art("g:a:1:jdk15", r1, 'b')), New: ptr(art("g:a:2:jdk15", r1, 'c'))}},
			summary: lockdiff.Summary{Upgraded: 1},
		},
		{
			name:    "userinfo never shows",
			old:     []lock.Artifact{art("g:a:1", "https://u:secret@repo.example.com/m2/", 'a')},
			new:     []lock.Artifact{art("g:a:1", r2, 'a')},
			want:    []lockdiff.ModuleChange{{Module: "g:a", Changes: []string{"repository"}, Old: ptr(art("g:a:1", r1, 'a')), New: ptr(art("g:a:1", r2, 'a'))}},
			summary: lockdiff.Summary{RepositoryChanged: 1},
		},
		// Wheels are modules "pypi/<project>", compared in PEP 440 order,
		// beside the jars and never mixed with them.
		{
			name: "wheels equal",
			old:  []lock.Artifact{art("g:a:1", r1, 'j'), wheel("six", "1.16.0", 'a')},
			new:  []lock.Artifact{art("g:a:1", r1, 'j'), wheel("six", "1.16.0", 'a')},
			want: []lockdiff.ModuleChange{},
		},
		{
			name:    "wheels added and removed",
			old:     []lock.Artifact{art("g:a:1", r1, 'j'), wheel("six", "1.16.0", 'a')},
			new:     []lock.Artifact{art("g:a:1", r1, 'j'), wheel("typing-extensions", "4.12.2", 'b')},
			want:    []lockdiff.ModuleChange{{Module: "pypi/six", Changes: []string{"removed"}, Old: ptr(wheel("six", "1.16.0", 'a'))}, {Module: "pypi/typing-extensions", Changes: []string{"added"}, New: ptr(wheel("typing-extensions", "4.12.2", 'b'))}},
			summary: lockdiff.Summary{Added: 1, Removed: 1},
		},
		{
			name:    "upgrade by PEP 440, not string order",
			old:     []lock.Artifact{wheel("numpy", "1.9.0", 'a')},
			new:     []lock.Artifact{wheel("numpy", "1.10.0", 'b')},
			want:    []lockdiff.ModuleChange{{Module: "pypi/numpy", Changes: []string{"upgrade"}, Old: ptr(wheel("numpy", "1.9.0", 'a')), New: ptr(wheel("numpy", "1.10.0", 'b'))}},
			summary: lockdiff.Summary{Upgraded: 1},
		},
		{
			name:    "downgrade to a release candidate",
			old:     []lock.Artifact{wheel("numpy", "2.0.0", 'a')},
			new:     []lock.Artifact{wheel("numpy", "2.0.0rc1", 'b')},
			want:    []lockdiff.ModuleChange{{Module: "pypi/numpy", Changes: []string{"downgrade"}, Old: ptr(wheel("numpy", "2.0.0", 'a')), New: ptr(wheel("numpy", "2.0.0rc1", 'b'))}},
			summary: lockdiff.Summary{Downgraded: 1},
		},
		{
			name:    "same version, new content",
			old:     []lock.Artifact{wheel("six", "1.16.0", 'a')},
			new:     []lock.Artifact{wheel("six", "1.16.0", 'b')},
			want:    []lockdiff.ModuleChange{{Module: "pypi/six", Changes: []string{"content"}, Old: ptr(wheel("six", "1.16.0", 'a')), New: ptr(wheel("six", "1.16.0", 'b'))}},
			summary: lockdiff.Summary{ContentChanged: 1},
		},
		{
			name:    "a jar pypi:six and a wheel six are two modules",
			old:     []lock.Artifact{art("pypi:six:1", r1, 'a')},
			new:     []lock.Artifact{art("pypi:six:1", r1, 'a'), wheel("six", "1.16.0", 'b')},
			want:    []lockdiff.ModuleChange{{Module: "pypi/six", Changes: []string{"added"}, New: ptr(wheel("six", "1.16.0", 'b'))}},
			summary: lockdiff.Summary{Added: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := lockdiff.Compare("old", lf(in, tt.old...), "new", lf(in, tt.new...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, d.Modules); diff != "" {
				t.Errorf("modules (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.summary, d.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if got, want := d.Equal, len(tt.want) == 0; got != want {
				t.Errorf("Equal = %v, want %v", got, want)
			}
			if d.InputsChanged {
				t.Errorf("InputsChanged = true for equal inputs")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

const pypi = "https://pypi.org/simple/"

func wheel(name, version string, shaChar byte) lock.Artifact {
	return lock.Artifact{Kind: lock.KindWheel, Name: name, Version: version, File: strings.ReplaceAll(name, "-", "_") + "-" + version + "-py3-none-any.whl",
		Repository: pypi, Sha256: sha(shaChar), Size: 10}
}

func TestComparePythonInputs(t *testing.T) {
	jars := lock.Inputs{Conflict: "latest"}
	py := jars
	py.Python = &lock.PythonInputs{Version: "3.11", Platforms: []string{"any"}, Requirements: []string{"six"}, Indexes: []string{"https://u:secret@pypi.example/simple/"}}
	d, err := lockdiff.Compare("old", lf(jars), "new", lf(py))
	if err != nil {
		t.Fatal(err)
	}
	want := &lockdiff.PythonDiff{
		Requirements: lockdiff.ListDiff{Added: []string{"six"}, Removed: []string{}},
		Indexes:      lockdiff.ListDiff{Added: []string{"https://pypi.example/simple/"}, Removed: []string{}},
		Platforms:    lockdiff.ListDiff{Added: []string{"any"}, Removed: []string{}},
		Version:      &lockdiff.ValueChange{Old: "", New: "3.11"},
	}
	if diff := cmp.Diff(want, d.Inputs.Python); diff != "" {
		t.Errorf("python inputs (-want +got):\n%s", diff)
	}
	if !d.InputsChanged || d.Why != "The inputs changed (python) but resolve to the same artifacts." {
		t.Errorf("InputsChanged %v, Why %q", d.InputsChanged, d.Why)
	}
	same, err := lockdiff.Compare("old", lf(jars), "new", lf(jars))
	if err != nil {
		t.Fatal(err)
	}
	if same.Inputs.Python != nil {
		t.Errorf("jar-only locks have a python diff: %+v", same.Inputs.Python)
	}
}

func TestCompareInputs(t *testing.T) {
	base := lock.Inputs{Conflict: "latest", Packages: []string{"g:a:1", "g:b:1"}, Repositories: []string{r1, r2}, Excludes: []string{"x:y"}}
	tests := []struct {
		name   string
		change func(*lock.Inputs)
		want   lockdiff.InputsDiff
		why    string
	}{
		{
			name:   "equal",
			change: func(*lock.Inputs) {},
			want:   lockdiff.InputsDiff{Packages: none(), Repositories: none(), Excludes: none()},
			why:    "The locks are identical",
		},
		{
			name:   "package bumped",
			change: func(in *lock.Inputs) { in.Packages = []string{"g:a:2", "g:b:1"} },
			want:   lockdiff.InputsDiff{Packages: lockdiff.ListDiff{Added: []string{"g:a:2"}, Removed: []string{"g:a:1"}}, Repositories: none(), Excludes: none()},
			why:    "The inputs changed (packages) but resolve to the same jars.",
		},
		{
			name: "repositories reordered, conflict changed, exclude dropped",
			change: func(in *lock.Inputs) {
				in.Repositories = []string{r2, r1}
				in.Conflict = "strict"
				in.Excludes = nil
			},
			want: lockdiff.InputsDiff{Packages: none(), Repositories: lockdiff.ListDiff{Added: []string{}, Removed: []string{}, Reordered: true},
				Excludes: lockdiff.ListDiff{Added: []string{}, Removed: []string{"x:y"}}, Conflict: &lockdiff.ValueChange{Old: "latest", New: "strict"}},
			why: "The inputs changed (repositories, excludes, conflict) but resolve to the same jars.",
		},
	}
	arts := []lock.Artifact{art("g:a:1", r1, 'a')}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			in.Packages = append([]string(nil), base.Packages...)
			tt.change(&in)
			d, err := lockdiff.Compare("old", lf(base, arts...), "new", lf(in, arts...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, d.Inputs); diff != "" {
				t.Errorf("inputs (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(d.Why, tt.why) {
				t.Errorf("Why = %q, want prefix %q", d.Why, tt.why)
			}
		})
	}
}

func none() lockdiff.ListDiff { return lockdiff.ListDiff{Added: []string{}, Removed: []string{}} }

func TestMalformedCoord(t *testing.T) {
	bad := lf(lock.Inputs{}, lock.Artifact{Coord: "g:a", File: "g_a.jar", Sha256: sha('a')})
	_, err := lockdiff.Compare("old", bad, "new", lf(lock.Inputs{}))
	if got := errdefs.KindOf(err); got != errdefs.Invalid {
		t.Fatalf("Compare with coord g:a: kind %v (%v), want %v", got, err, errdefs.Invalid)
	}
	if !strings.Contains(err.Error(), "lockfile old") {
		t.Errorf("error %q does not name the lock", err)
	}
}

// TestGolden diffs the locks in testdata/lockdiff and compares the text and
// JSON renderings with the golden files (go test -update rewrites them).
func TestGolden(t *testing.T) {
	for _, tc := range []struct{ old, new string }{
		{"base", "base"},
		{"base", "inputs-changed"},
		{"base", "content-changed"},
		{"python", "python-changed"},
		{"base", "python"},
	} {
		name := tc.old + "_" + tc.new
		t.Run(name, func(t *testing.T) {
			oldL, err := lock.Read(filepath.Join(testdata, tc.old+".lock"))
			if err != nil {
				t.Fatal(err)
			}
			newL, err := lock.Read(filepath.Join(testdata, tc.new+".lock"))
			if err != nil {
				t.Fatal(err)
			}
			d, err := lockdiff.Compare(tc.old+".lock", oldL, tc.new+".lock", newL)
			if err != nil {
				t.Fatal(err)
			}
			var text, js bytes.Buffer
			if err := lockdiff.WriteText(&text, d); err != nil {
				t.Fatal(err)
			}
			if err := lockdiff.WriteJSON(&js, d); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join(testdata, name+".txt"), text.Bytes())
			golden(t, filepath.Join(testdata, name+".json"), js.Bytes())

			// The JSON round-trips into the documented type.
			var back lockdiff.Diff
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(d, &back); diff != "" {
				t.Errorf("JSON round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContentChangeIsLoud(t *testing.T) {
	oldL, _ := lock.Read(filepath.Join(testdata, "base.lock"))
	newL, _ := lock.Read(filepath.Join(testdata, "content-changed.lock"))
	d, err := lockdiff.Compare("a", oldL, "b", newL)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := lockdiff.WriteText(&text, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"!!! CONTENT CHANGED UNDER THE SAME VERSION (1)", "net.sf.json-lib:json-lib:jdk15 2.4", "WARNING: 1 artifact(s) changed content", "The inputs are identical"} {
		if !strings.Contains(text.String(), want) && !strings.Contains(d.Why, want) {
			t.Errorf("output lacks %q:\n%s", want, text.String())
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
