package lockdiff_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/lockdiff"
	"github.com/prebake/prebake/lock"
)

// TestUpdateOf: what a lock written over another changed, one line per
// module (init's report): added, removed, another version, the same
// version from elsewhere; no lock before is no change.
func TestUpdateOf(t *testing.T) {
	in := lock.Inputs{Conflict: "latest", Packages: []string{"g:a:1"}, Repositories: []string{r1}}
	in2 := lock.Inputs{Conflict: "latest", Packages: []string{"g:a:2"}, Repositories: []string{r1}}
	before := lf(in, art("g:a:1", r1, 'a'), art("g:gone:1", r1, 'b'), art("g:moved:1", r1, 'c'))
	tests := []struct {
		name          string
		before, after *lock.File
		want          lockdiff.Update
	}{
		{"no lock before", nil, before, lockdiff.Update{Changes: []string{}}},
		{"the same lock", before, lf(in, art("g:a:1", r1, 'a'), art("g:gone:1", r1, 'b'), art("g:moved:1", r1, 'c')),
			lockdiff.Update{Replaced: true, SameInputs: true, Changes: []string{}}},
		{"changed", before, lf(in2, art("g:a:2", r1, 'd'), art("g:moved:1", r2, 'c'), art("g:new:1", r1, 'e')),
			lockdiff.Update{Replaced: true, Changes: []string{"~ g:a: 1 -> 2", "- g:gone:1", "~ g:moved: repository", "+ g:new:1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lockdiff.UpdateOf(tt.before, tt.after)); diff != "" {
				t.Errorf("UpdateOf (-want +got):\n%s", diff)
			}
		})
	}
}
