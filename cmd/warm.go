package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
)

func init() { register(newWarmCmd) }

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
flags are defaults for every set; a set's repositories and excludes add to them.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runWarm(c.Context(), g, o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	o.s3.add(fs)
	o.resolve.add(fs)
	fs.StringVarP(&o.file, "file", "f", "", "sets file (YAML)")
	fs.StringVar(&o.shard, "shard", "0/1", "the part of the sets to do: i/n")
	fs.IntVar(&o.sets, "sets-in-flight", 2, "sets resolved and uploaded at once")
	fs.BoolVar(&o.verify, "verify", false, "on a hit, HEAD every jar and re-upload missing ones")
	return c
}

func runWarm(ctx context.Context, g *globals, o *warmOptions, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, "text", "json")
	if err != nil {
		return err
	}
	if o.file == "" {
		return exitcode.Errorf(exitcode.Usage, "--file is required")
	}
	if o.resolve.lock != "" || len(o.resolve.packages) > 0 {
		return exitcode.Errorf(exitcode.Usage, "warm takes packages and locks from --file, not --packages or --lock")
	}
	i, n, err := s3store.ParseShard(o.shard)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(o.file)
	if err != nil {
		return exitcode.New(exitcode.NotFound, fmt.Errorf("sets file: %w", err))
	}
	sf, err := s3store.ParseSets(o.file, data)
	if err != nil {
		return err
	}
	if o.s3.store == "" {
		o.s3.store = sf.Store
	}
	opts, err := o.s3.options(stderr, g.quiet)
	if err != nil {
		return err
	}
	store, err := s3store.Open(ctx, o.s3.store, opts...)
	if err != nil {
		return err
	}
	sets := s3store.Shard(sf.Sets, i, n)
	if !g.quiet {
		fmt.Fprintf(stderr, "warm: shard %d/%d: %d of %d sets into %s\n", i, n, len(sets), len(sf.Sets), store.URL())
	}
	base := filepath.Dir(o.file)
	results, werr := store.Warm(ctx, sets, func(ctx context.Context, set s3store.SetSpec) (*resolver.Lockfile, s3store.JarSource, error) {
		f := o.resolve // a copy per set
		f.repositories = append(append([]string{}, o.resolve.repositories...), set.Repositories...)
		f.excludes = append(append([]string{}, o.resolve.excludes...), set.Excludes...)
		if set.Conflict != "" {
			f.conflict = set.Conflict
		}
		if set.Lock != "" {
			f.lock = set.Lock
			if !filepath.IsAbs(f.lock) {
				f.lock = filepath.Join(base, f.lock)
			}
		}
		f.packages = set.Packages
		return lockAndJars(ctx, &f, nil, stderr, g.quiet)
	}, o.sets, s3store.Verify(o.verify))
	if out == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"store": store.URL(), "shard": o.shard, "sets": results}); err != nil {
			return err
		}
		return werr
	}
	var sent int64
	for _, r := range results {
		sent += r.BytesSent
		switch {
		case r.Error != "":
			fmt.Fprintf(stdout, "%s\tFAILED\t%s\n", r.Name, r.Error)
		case r.Hit:
			fmt.Fprintf(stdout, "%s\t%s\thit\n", r.Name, r.LockHash)
		default:
			fmt.Fprintf(stdout, "%s\t%s\tuploaded %d jars (%d bytes), %d already there\n", r.Name, r.LockHash, r.Uploaded, r.BytesSent, r.Skipped)
		}
	}
	if !g.quiet {
		fmt.Fprintf(stderr, "warm: %d sets, %d bytes sent\n", len(results), sent)
	}
	return werr
}
