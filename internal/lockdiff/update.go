package lockdiff

import (
	"fmt"
	"strings"

	"github.com/prebake/prebake/lock"
)

// Update is what writing a lock over another changed, in one line per
// module: what a command that updates a lock in place (init run again)
// reports.
type Update struct {
	// Replaced is set when there was a lock before.
	Replaced bool
	// SameInputs is set when the lock before had the same inputs
	// (inputsHash): nothing was asked to change.
	SameInputs bool
	// Changes are the modules that differ, sorted by module: "+ g:a:v"
	// (added), "- g:a:v" (removed), "~ g:a: 1.0 -> 2.0" (another version),
	// "~ g:a: repository, file" (the same version: the kinds of change).
	// Never nil; empty when nothing was replaced, or the locks do not
	// compare.
	Changes []string
}

// UpdateOf compares the lock before (nil: none) with the one written over
// it.
func UpdateOf(before, after *lock.File) Update {
	u := Update{Changes: []string{}}
	if before == nil {
		return u
	}
	u.Replaced = true
	u.SameInputs = before.Inputs.InputsHash == after.Inputs.InputsHash
	d, err := Compare("old", before, "new", after)
	if err != nil {
		return u
	}
	for _, m := range d.Modules {
		switch {
		case m.Has(Added):
			u.Changes = append(u.Changes, "+ "+m.New.Coord)
		case m.Has(Removed):
			u.Changes = append(u.Changes, "- "+m.Old.Coord)
		case m.OldVersion() != m.NewVersion():
			u.Changes = append(u.Changes, fmt.Sprintf("~ %s: %s -> %s", m.Module, m.OldVersion(), m.NewVersion()))
		default:
			u.Changes = append(u.Changes, fmt.Sprintf("~ %s: %s", m.Module, strings.Join(m.Changes, ", ")))
		}
	}
	return u
}
