package cmd

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/cacheprune"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/pipeline"
)

// newCacheCmd is `prebake cache` (prune).
func newCacheCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:     "cache",
		Short:   "Maintain the local cache (prune)",
		Example: `  prebake cache prune --older-than 30d`,
		Args:    cobra.NoArgs,
	}
	c.AddCommand(newCachePruneCmd(g))
	return c
}

type cachePruneOptions struct {
	cache     string
	olderThan time.Duration
	maxSize   string
	keepLocks []string
	dryRun    bool
}

// newCachePruneCmd is `prebake cache prune`.
func newCachePruneCmd(g *globals) *cobra.Command {
	o := &cachePruneOptions{}
	c := &cobra.Command{
		Use:   "prune (--older-than AGE | --max-size SIZE) [--keep-lock FILE]…",
		Short: "Remove jars, image layers and retrieve dirs the local cache no longer needs",
		Long: `prune removes from the local cache (--cache, $PREBAKE_CACHE, prebake.yaml) the jar blobs,
built image layers, retrieve directories and edited properties files not used for longer
than --older-than (a layer counts as used on every cache hit, a jar when it was fetched),
then, with --max-size, the oldest of the rest until the cache fits, except the retrieve
directories and edited files written in the last hour (a job may be using the paths a
rewrite just printed). Jars that a kept lock names (--keep-lock, repeatable; default
./prebake.lock when it exists) are never removed.
The bookkeeping goes with them: index entries and stamps of removed jars, download-lock and
404 files and temp files older than the age (a day with only --max-size), unless a running
prebake holds the lock. For CI caches (actions/cache, a GitLab cache), run it before the
cache is saved.

prune removes only inside the cache and follows no symbolic link: a link found in the cache
is removed itself, never what it points to. Like every command that uses the cache, it
refuses (exit 73, removing nothing) a cache directory that another user owns or may change.`,
		Example: `  prebake cache prune --older-than 30d
  prebake cache prune --older-than 14d --max-size 5GB --keep-lock jobs/etl/prebake.lock --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runCachePrune(g, o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.cache, "cache", "", "the cache directory (default $PREBAKE_CACHE, else the user cache dir + /prebake)")
	durationVar(fs, &o.olderThan, "older-than", 0, "remove what was not used for longer than this (e.g. 30d, 12h)")
	fs.StringVar(&o.maxSize, "max-size", "", "then remove the oldest until the cache takes at most this (e.g. 5GB, 500MB, bytes)")
	fs.StringArrayVar(&o.keepLocks, "keep-lock", nil, "a lockfile whose jars are never removed (repeatable; default ./prebake.lock when it exists)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what would be removed, remove nothing")
	return c
}

func runCachePrune(g *globals, o *cachePruneOptions, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if o.olderThan <= 0 && o.maxSize == "" {
		return exitcode.Errorf(exitcode.Usage, "cache prune needs --older-than AGE or --max-size SIZE (or both)")
	}
	size, err := parseSize(o.maxSize)
	if err != nil {
		return exitcode.Errorf(exitcode.Usage, "--max-size %q: %v", o.maxSize, err)
	}
	dir := pipeline.CacheDir(o.cache)
	locks := o.keepLocks
	if len(locks) == 0 {
		if _, err := os.Stat("prebake.lock"); err == nil {
			locks = []string{"prebake.lock"}
		}
	}
	keep := map[string]bool{}
	for _, p := range locks {
		l, err := lock.Read(p)
		if err != nil {
			return fmt.Errorf("--keep-lock: %w", err)
		}
		for _, a := range l.Artifacts {
			keep[a.Sha256] = true
		}
	}
	// A cache directory open to others is worth a warning even under -q
	// (audit 4, L3), as a link prune does not follow.
	progress := g.reporter(stderr)
	defer progress.Wait()
	rep, err := cacheprune.Prune(cachedir.At(dir).Root(), cacheprune.Options{OlderThan: o.olderThan, MaxSize: size, Keep: keep, DryRun: o.dryRun, Warnf: progress.Alertf})
	if err != nil {
		return err
	}
	if out == outJSON {
		return printJSON(stdout, rep)
	}
	keepResult(stdout, rep)
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(stdout, "%s %d jars, %d layers, %d retrieve dirs, %d rewrite files (%s); %d index entries, %d lock files, %d temp files; %s kept (%d jars kept by locks)\n",
		verb, rep.Blobs, rep.Layers, rep.Retrieve, rep.Rewrite, sizeString(rep.BytesFreed), rep.IndexFiles, rep.LockFiles, rep.TempFiles, sizeString(rep.BytesKept), rep.KeptByLocks)
	return nil
}

// parseSize parses "5GB", "500MB", "10KiB" or bytes ("" is 0).
func parseSize(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 || n*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("want a positive size such as 5GB, 500MB or 1048576")
	}
	return int64(n * float64(mult)), nil
}

// sizeString is n bytes for people (MB, GB).
func sizeString(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d bytes", n)
}
