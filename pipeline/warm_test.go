package pipeline

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/s3store/s3test"
)

func TestSetsAndShards(t *testing.T) {
	data := []byte(`
store: s3://b/p
sets:
  - name: a
    packages: ["g:a:1"]
  - name: b
    lock: b.lock
  - name: c
    packages: ["g:c:1"]
    conflict: nearest
`)
	f, err := ParseSets("sets.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ss []SetSpec) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	if d := cmp.Diff([]string{"a", "c"}, names(Shard(f.Sets, 0, 2))); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"b"}, names(Shard(f.Sets, 1, 2))); d != "" {
		t.Error(d)
	}
	for _, bad := range []string{"sets: []", "sets: [{name: x}]", "sets: [{name: x, packages: [a], bogus: 1}]", "sets: [{name: x, packages: [a]}, {name: x, packages: [b]}]", "sets: [{name: x, packages: [a], conflict: max}]"} {
		if _, err := ParseSets("bad", []byte(bad)); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("ParseSets(%q) = %v, want exit 65", bad, err)
		}
	}
	for _, tc := range []struct {
		in   string
		i, n int
		ok   bool
	}{{"0/1", 0, 1, true}, {"3/4", 3, 4, true}, {"4/4", 0, 0, false}, {"-1/2", 0, 0, false}, {"x", 0, 0, false}, {"1/0", 0, 0, false}} {
		i, n, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || i != tc.i || n != tc.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v", tc.in, i, n, err)
		}
	}
}

func TestWarmFileStoreIdempotent(t *testing.T) {
	dir := t.TempDir()
	fix := t.TempDir()
	lockA, pathsA := s3test.Fixture(t, fix, 21, s3test.Jar{Name: "shared", Size: 4 << 10}, s3test.Jar{Name: "a", Size: 2 << 10})
	lockB, pathsB := s3test.Fixture(t, fix, 21, s3test.Jar{Name: "shared", Size: 4 << 10}, s3test.Jar{Name: "b", Size: 1 << 10})
	sets := []SetSpec{{Name: "A", Packages: []string{"x"}}, {Name: "B", Packages: []string{"y"}}, {Name: "bad", Packages: []string{"z"}}}
	resolve := func(_ context.Context, s SetSpec) (setFiles, error) {
		switch s.Name {
		case "A":
			return setFiles{lock: lockA, jars: lock.LocalJars(pathsA)}, nil
		case "B":
			return setFiles{lock: lockB, jars: lock.LocalJars(pathsB)}, nil
		}
		return setFiles{}, errdefs.Errorf(errdefs.NotFound, "no such module")
	}
	st, err := s3store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := warm(context.Background(), st, sets, 2, nil, resolve)
	if errdefs.KindOf(err) != errdefs.NotFound || res[2].Error == "" {
		t.Fatalf("warm with a failing set: %v", err)
	}
	if got := res[0].Uploaded + res[1].Uploaded; got != 3 {
		t.Errorf("first warm uploaded %d jars, want 3 (the shared one once)", got)
	}
	res, err = warm(context.Background(), st, sets[:2], 2, nil, resolve)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Hit || r.BytesSent != 0 {
			t.Errorf("second warm, set %s: hit=%v sent=%d, want a hit sending nothing", r.Name, r.Hit, r.BytesSent)
		}
	}
}

func TestExampleSetsFile(t *testing.T) {
	data, err := os.ReadFile("../examples/sets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseSets("examples/sets.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Store == "" || len(f.Sets) < 4 {
		t.Errorf("examples/sets.yaml: store %q, %d sets", f.Store, len(f.Sets))
	}
}

// TestSetRequest: the flags are every set's defaults; a set's repositories
// and excludes add to them, its conflict mode and lock replace them, and
// the defaults are not changed.
func TestSetRequest(t *testing.T) {
	def := resolver.Request{Repositories: []string{"https://r0/"}, Excludes: []string{"x:y"}, Conflict: lock.ConflictLatest, CacheDir: "/c"}
	for _, tc := range []struct {
		name string
		set  SetSpec
		want resolver.Request
	}{
		{"packages only", SetSpec{Name: "a", Packages: []string{"g:a:1"}},
			resolver.Request{Packages: []string{"g:a:1"}, Repositories: []string{"https://r0/"}, Excludes: []string{"x:y"}, Conflict: lock.ConflictLatest, CacheDir: "/c"}},
		{"a set's own", SetSpec{Name: "b", Packages: []string{"g:b:1"}, Repositories: []string{"https://r1/"}, Excludes: []string{"z:w"}, Conflict: lock.ConflictNearest, Lock: "b.lock"},
			resolver.Request{Packages: []string{"g:b:1"}, Repositories: []string{"https://r0/", "https://r1/"}, Excludes: []string{"x:y", "z:w"}, Conflict: lock.ConflictNearest, LockPath: "/sets/b.lock", CacheDir: "/c"}},
		{"an absolute lock alone", SetSpec{Name: "c", Lock: "/locks/c.lock"},
			resolver.Request{Repositories: []string{"https://r0/"}, Excludes: []string{"x:y"}, Conflict: lock.ConflictLatest, LockPath: "/locks/c.lock", CacheDir: "/c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SetRequest(def, tc.set, "/sets"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"https://r0/"}, def.Repositories); diff != "" {
		t.Errorf("SetRequest changed the defaults (-want +got):\n%s", diff)
	}
}
