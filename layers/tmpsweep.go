package layers

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A layer blob is written to <layers>/blobs/sha256/.tmp-* and renamed to
// its digest. The writer holds an exclusive lock (flock) on its temp file
// for as long as it writes, so that a temp file left by a killed bake (kill
// -9: no defer runs; a 400 MB jar left 242 MB) can be told from a live
// one: the next bake that uses the same layer cache removes the temp
// files nobody holds (sweepTemps). On a platform without flock,
// only temp files older than staleTempAge go.

// tempGrace protects a temp file just made, before its writer locks it
// (microseconds later; the margin is for a loaded machine).
const tempGrace = 10 * time.Second

// staleTempAge is the age past which a temp file that cannot be tested
// with a lock is taken as left behind (no bake writes one layer for a day).
const staleTempAge = 24 * time.Hour

const tempPrefix = ".tmp-"

// swept holds the blob directories this process has swept already.
var swept sync.Map

// createTemp makes a temp file in bdir, locked for the writer's lifetime
// (the lock goes with the file's close, or the process's death).
func createTemp(bdir string) (*os.File, error) {
	f, err := os.CreateTemp(bdir, tempPrefix+"*")
	if err != nil {
		return nil, err
	}
	lockTemp(f) // best effort: an unlocked temp file is only swept when old
	return f, nil
}

// sweepTemps removes, once per process and directory, the temp files of
// bdir that their writer left: older than tempGrace and locked by no one
// (or, where locks cannot be tested, older than staleTempAge). It returns
// how many it removed. Errors are ignored: a temp file that stays only
// takes room.
func sweepTemps(bdir string, now time.Time) int {
	if _, done := swept.LoadOrStore(bdir, true); done {
		return 0
	}
	ents, err := os.ReadDir(bdir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), tempPrefix) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(bdir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || now.Sub(fi.ModTime()) < tempGrace {
			continue
		}
		if removeIfUnheld(p, fi, now) {
			n++
		}
	}
	return n
}
