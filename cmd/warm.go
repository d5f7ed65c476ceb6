package cmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver/repo"
	"github.com/prebake/prebake/s3store"
)

type warmOptions struct {
	s3      s3StoreFlags
	resolve resolveFlags
	file    string
	shard   string
	sets    int
	verify  bool
}

func newWarmCmd(g *globals) *cobra.Command {
	o := &warmOptions{}
	c := &cobra.Command{
		Use:   "warm --file sets.yaml",
		Short: "Resolve many package sets and upload them to a jar store (idempotent)",
		Long: `warm resolves every set of a sets file (see examples/sets.yaml) and bakes it into
the store, as bake s3 does. A second run sends no jar bytes. --shard i/n takes
every n-th set starting at i, so a Kubernetes indexed Job can split the work
(--shard $(JOB_COMPLETION_INDEX)/N; see examples/warm-job.yaml). The resolution
flags are defaults for every set; a set's repositories and excludes add to them.

A set may carry a Python half (python: requirements, a path relative to the sets
file, and the target: version and platform, or neither for the one its lock
records): its wheels go into the set's site-packages archive, as bake s3
--py-requirements does. A set of a lock with wheels bakes them too. The Python
flags are not read here: the sets file holds each set's.`,
		Example: `  prebake warm --file examples/sets.yaml
  # shard 2 of 4 (in an indexed Job: --shard=$(JOB_COMPLETION_INDEX)/4)
  prebake warm --file sets.yaml --shard 2/4 --store s3://team-spark-jars/prebake -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runWarm(c.Context(), g, o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	o.s3.add(fs)
	o.s3.addConcurrency(fs)
	// Packages and locks come from --file.
	o.resolve.add(fs, "packages", "lock", "frozen")
	fs.StringVarP(&o.file, "file", "f", "", "sets file (YAML)")
	fs.StringVar(&o.shard, "shard", "0/1", "the part of the sets to do: i/n")
	fs.IntVar(&o.sets, "sets-in-flight", 2, "sets resolved and uploaded at once")
	fs.BoolVar(&o.verify, "verify", false, "on a hit, HEAD every jar and re-upload missing ones")
	return c
}

// maxSetsFileSize bounds --file and --keep-sets.
const maxSetsFileSize = 16 << 20

func runWarm(ctx context.Context, g *globals, o *warmOptions, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if o.file == "" {
		return exitcode.Errorf(exitcode.Usage, "--file is required")
	}
	i, n, err := pipeline.ParseShard(o.shard)
	if err != nil {
		return err
	}
	data, err := localfile.Read(o.file, maxSetsFileSize)
	if err != nil {
		return fmt.Errorf("sets file: %w", err) // 66 missing, 65 not a regular file or too large
	}
	sf, err := pipeline.ParseSets(o.file, data)
	if err != nil {
		return err
	}
	if o.s3.store == "" {
		o.s3.store = sf.Store
	}
	rep := g.reporter(stderr)
	defer rep.Wait()
	opts, err := o.s3.options(rep)
	if err != nil {
		return err
	}
	store, err := s3store.Open(ctx, o.s3.store, opts...)
	if err != nil {
		return err
	}
	sets := pipeline.Shard(sf.Sets, i, n)
	if !g.quiet {
		fmt.Fprintf(stderr, "warm: shard %d/%d: %d of %d sets into %s\n", i, n, len(sets), len(sf.Sets), store.URL())
	}
	// The flags are every set's defaults (pipeline.SetRequest).
	def, err := o.resolve.request()
	if err != nil {
		return err
	}
	results, werr := pipeline.Warm(ctx, store, sets, pipeline.WarmOptions{Request: def, Dir: filepath.Dir(o.file), Concurrency: o.sets, Reporter: rep,
		Bake:   []s3store.BakeOption{s3store.WithVerify(o.verify)},
		Python: pipeline.PythonRequest{UserAgent: repo.UserAgent(buildVersion()), MaxRetryWait: def.MaxRetryWait}})
	rep.Wait()
	if out == outJSON {
		if err := printJSON(stdout, jsondoc.WarmOutput{Store: store.URL(), Shard: o.shard, Sets: results}); err != nil {
			return err
		}
		return werr
	}
	var sent int64
	failed := 0
	for _, r := range results {
		sent += r.BytesSent
		switch {
		case r.Error != "":
			failed++
			fmt.Fprintf(stdout, "%s\tFAILED\t%s\n", r.Name, r.Error)
		case r.Hit:
			fmt.Fprintf(stdout, "%s\t%s\thit\n", r.Name, r.LockHash)
		case r.Wheels > 0:
			fmt.Fprintf(stdout, "%s\t%s\tuploaded %d jars and the archive of %d wheels (%d bytes), %d already there\n", r.Name, r.LockHash, r.Uploaded, r.Wheels, r.BytesSent, r.Skipped)
		default:
			fmt.Fprintf(stdout, "%s\t%s\tuploaded %d jars (%d bytes), %d already there\n", r.Name, r.LockHash, r.Uploaded, r.BytesSent, r.Skipped)
		}
	}
	if !g.quiet {
		fmt.Fprintf(stderr, "warm: %d sets (%d failed), %d bytes sent\n", len(results), failed, sent)
	}
	return werr
}

// gc lives here with warm: both maintain the jar store.

type gcOptions struct {
	s3        s3StoreFlags
	keepSets  string
	olderThan string
	grace     time.Duration
	dryRun    bool
}

func newGCCmd(g *globals) *cobra.Command {
	o := &gcOptions{}
	c := &cobra.Command{
		Use:   "gc --store URL (--keep-sets FILE | --older-than 30d)",
		Short: "Delete sets, and the jars no kept set references, from a jar store",
		Long: `gc deletes the set manifests that are not kept, then every jar that no kept set
references. A set is kept when --keep-sets lists it (lock hashes or lockfile
paths, one per line; # starts a comment) or, with --older-than, when it was
used more recently than that: baked, or hit by bake s3, warm, rewrite --store or
submit --store (each hit records used/<lock-hash>/<day> in the store). Jars younger than --grace are never deleted,
because a bake in progress uploads its jars before its manifest. The multipart
uploads under the store's jars/ that a killed bake s3 left unfinished (stored, and
billed, yet no object) are aborted once older than --grace too ("upload" lines).`,
		Example: `  # keep the sets of the locks in use (lockfile paths or lock hashes, one per line)
  prebake gc --store s3://team-spark-jars/prebake --keep-sets keep.txt --dry-run
  prebake gc --store s3://team-spark-jars/prebake --older-than 30d`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runGC(c.Context(), g, o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	o.s3.add(c.Flags())
	c.Flags().StringVar(&o.keepSets, "keep-sets", "", "file listing the sets to keep (lock hashes or lockfile paths)")
	c.Flags().StringVar(&o.olderThan, "older-than", "", "delete sets not baked or hit for longer than this (e.g. 30d, 12h)")
	durationVar(c.Flags(), &o.grace, "grace", time.Hour, "never delete jars, nor abort unfinished uploads, younger than this")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "print what would be deleted, delete nothing")
	return c
}

func runGC(ctx context.Context, g *globals, o *gcOptions, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if o.keepSets == "" && o.olderThan == "" {
		return exitcode.Errorf(exitcode.Usage, "gc needs --keep-sets FILE or --older-than AGE")
	}
	keep := map[string]bool{}
	if o.keepSets != "" {
		data, err := localfile.Read(o.keepSets, maxSetsFileSize)
		if err != nil {
			return fmt.Errorf("--keep-sets: %w", err) // 66 missing, 65 not a regular file or too large
		}
		for _, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, "#")
			line = strings.TrimSpace(line)
			switch {
			case line == "":
			case len(line) == 64 && strings.Trim(line, "0123456789abcdef") == "":
				keep[line] = true
			default:
				p := line
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(o.keepSets), p)
				}
				l, err := lock.Read(p)
				if err != nil {
					return err
				}
				keep[l.Hash()] = true
			}
		}
	}
	var maxAge time.Duration
	if o.olderThan != "" {
		if maxAge, err = parseAge(o.olderThan); err != nil {
			return err
		}
	}
	opts, err := o.s3.options(g.reporter(stderr))
	if err != nil {
		return err
	}
	store, err := s3store.Open(ctx, o.s3.store, opts...)
	if err != nil {
		return err
	}
	now := time.Now()
	res, err := store.GC(ctx, func(hash string, written time.Time) bool {
		if keep[hash] {
			return true
		}
		return maxAge > 0 && now.Sub(written) < maxAge
	}, s3store.WithGrace(o.grace), s3store.WithDryRun(o.dryRun))
	if err != nil {
		return err
	}
	if out == outJSON {
		return printJSON(stdout, jsondoc.GCOutput{Store: store.URL(), DryRun: o.dryRun, Result: res})
	}
	for _, s := range res.DeletedSets {
		fmt.Fprintf(stdout, "set\t%s\n", s)
	}
	for _, j := range res.DeletedJars {
		fmt.Fprintf(stdout, "jar\t%s\n", j)
	}
	for _, u := range res.AbortedUploads {
		fmt.Fprintf(stdout, "upload\t%s\n", u)
	}
	if !g.quiet {
		verb := "deleted"
		if o.dryRun {
			verb = "would delete"
		}
		aborted := ""
		if n := len(res.AbortedUploads); n > 0 {
			aborted = fmt.Sprintf("; %s %d unfinished uploads", map[bool]string{true: "would abort", false: "aborted"}[o.dryRun], n)
		}
		fmt.Fprintf(stderr, "gc: kept %d sets; %s %d sets and %d jars (%d bytes); %d young jars left alone%s\n",
			res.KeptSets, verb, len(res.DeletedSets), len(res.DeletedJars), res.FreedBytes, res.YoungSkipped, aborted)
	}
	return nil
}

// parseAge parses a positive age (30d, 12h).
func parseAge(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err != nil || d <= 0 {
		return 0, exitcode.Errorf(exitcode.Usage, "--older-than %q: want a positive age such as 30d or 12h", s)
	}
	return d, nil
}
