package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// lockMatches reports whether req's lock (req.LockPath) matches the inputs
// of the packages pkgs, before the run: its set is then taken from the
// lock, not resolved. It reads the lock only (no network, no cache).
func lockMatches(ctx context.Context, req resolver.Request, pkgs submit.Packages) bool {
	if req.LockPath == "" {
		return false
	}
	r, err := pipeline.RequestFor(req, pkgs)
	if err != nil || len(r.Packages) == 0 {
		return false
	}
	_, err = resolver.LockFor(ctx, r)
	return err == nil
}

// resolutionSummary is the one line a run prints on stderr (the task log)
// by default, -q hides it: the set's lock hash, whether it came from the
// lock or was resolved, and how many jars it added, e.g.
//
//	prebake: lock 1a2b3c4d5e6f… from prebake.lock, 3 jars
//
// "" when the command line had no packages (no lock hash).
func resolutionSummary(r *rewrite.Result, lockPath string, fromLock bool) string {
	if r == nil || r.LockHash == "" {
		return ""
	}
	hash := r.LockHash
	if len(hash) > 12 {
		hash = hash[:12] + "…"
	}
	how := "resolved"
	switch {
	case fromLock:
		how = "from " + lockPath
	case lockPath != "":
		how = "resolved, written to " + lockPath
	}
	line := fmt.Sprintf("prebake: lock %s %s", hash, how)
	if n, ok := addedJars(r); ok {
		s := "s"
		if n == 1 {
			s = ""
		}
		line += fmt.Sprintf(", %d jar%s", n, s)
	}
	return line
}

// addedJars is how many jars the rewrite added to spark.jars (its change:
// the user's jars first, then the resolved ones).
func addedJars(r *rewrite.Result) (int, bool) {
	count := func(v string) int {
		if v == "" {
			return 0
		}
		return len(strings.Split(v, ","))
	}
	for _, ch := range r.Changes {
		if ch.Target == "spark.jars" && (ch.Action == rewrite.ChangeAdded || ch.Action == rewrite.ChangeReplaced) {
			return count(ch.New) - count(ch.Old), true
		}
	}
	return 0, false
}
