package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/atomicfile"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/lockdiff"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/pipeline/bundle"
	blobcache "github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/s3store"
)

func newBundleCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "bundle",
		Short: "Carry a locked jar set across an air gap (export, import)",
		Example: `  prebake bundle export --lock prebake.lock --to jobs.bundle.tar
  prebake bundle import jobs.bundle.tar --cache /var/cache/prebake --lock prebake.lock`,
	}
	c.AddCommand(newBundleExportCmd(g), newBundleImportCmd(g))
	return c
}

type bundleExportOptions struct {
	resolve  resolveFlags
	registry registryFlags
	to       string
}

func newBundleExportCmd(g *globals) *cobra.Command {
	o := &bundleExportOptions{}
	c := &cobra.Command{
		Use:   "export --lock FILE --to (FILE.tar | oci:DIR[:tag] | REGISTRY/REPO[:tag])",
		Short: "Write a lock's jars and wheels, the lock and its SBOM as one reproducible bundle",
		Long: `bundle export writes one bundle: index.json (every file's sha256 and size), the
lock, its CycloneDX SBOM and the lock's jars (fetched into the cache first, from
the repositories the lock records, when they are missing), its wheels when it
has a Python half (from the cache, where resolve --py-requirements put them:
exit 69 naming a wheel that is not there), and the signature
(.asc) of every jar the lock records a signer of (signedBy), from the cache
(exit 66 when one is not there: export with --verify-signatures). FILE.tar is one tar
file; oci:DIR an OCI image layout; anything else an OCI artifact pushed to a
registry (artifactType application/vnd.prebake.bundle.v1; the tag defaults to
the lock hash). The same lock and jars give the same bytes and digest.`,
		Example: `  prebake bundle export --lock prebake.lock --to jobs.bundle.tar
  prebake bundle export --lock prebake.lock --to registry.example.com/team/bundles`,
		RunE: func(c *cobra.Command, args []string) error {
			return runBundleExport(c.Context(), g, o, args, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	o.resolve.add(fs)
	o.registry.add(fs)
	o.registry.addJobs(fs)
	fs.StringVar(&o.to, "to", "", "where: FILE.tar, oci:DIR[:tag] or REGISTRY/REPO[:tag]")
	return c
}

// wheelCount is ", N wheels" for N > 0, else "".
func wheelCount(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d wheels", n)
}

// bundleFiles is the lock bundle export writes and its artifacts' files,
// index for index with its Artifacts. The jars are fetched as a bake
// fetches them (into the cache, when missing); a lock's wheels must be in
// the cache already (by sha256, checked): the Python half is fetched by
// prebake resolve --py-requirements, which export does not take.
func bundleFiles(ctx context.Context, f *resolveFlags, args []string, rep *progress.Reporter) (*lock.File, []string, error) {
	var lf *lock.File
	if len(f.packages) == 0 && len(args) == 0 && f.lock != "" {
		var err error
		if lf, err = lock.Read(f.lock); err != nil {
			return nil, nil, err
		}
	}
	if lf == nil || !lf.HasPython() {
		lf, jars, err := resolveLockAndJars(ctx, f, args, rep)
		if err != nil {
			return nil, nil, err
		}
		paths, err := jars(ctx)
		return lf, paths, err
	}
	// The jar half, fetched from a jar-only view of the lock.
	var jarPaths []string
	if len(lf.Jars()) > 0 {
		dir, err := os.MkdirTemp("", "prebake-bundle-")
		if err != nil {
			return nil, nil, exitcode.New(exitcode.CantCreate, err)
		}
		defer os.RemoveAll(dir)
		view := &lock.File{Inputs: lf.Inputs, Artifacts: lf.Jars()}
		view.Inputs.Python = nil
		jf := *f
		jf.lock = filepath.Join(dir, filepath.Base(f.lock))
		if err := lock.Write(jf.lock, view); err != nil {
			return nil, nil, err
		}
		_, jars, err := resolveLockAndJars(ctx, &jf, nil, rep)
		if err != nil {
			return nil, nil, err
		}
		if jarPaths, err = jars(ctx); err != nil {
			return nil, nil, err
		}
	}
	cache := pipeline.CacheDir(f.cache)
	paths := make([]string, 0, len(lf.Artifacts))
	for _, a := range lf.Artifacts {
		if a.IsJar() {
			paths, jarPaths = append(paths, jarPaths[0]), jarPaths[1:]
			continue
		}
		if err := blobcache.VerifyBlob(cache, a.Sha256, a.Size); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, nil, exitcode.Errorf(exitcode.Unavailable, "bundle export: wheel %s (sha256 %s) of %s is not in the cache %s: fetch the Python half first with prebake resolve --py-requirements FILE --python-version %s --python-platform %s --lock %s --cache %s",
					a.File, a.Sha256, f.lock, cache, lf.Inputs.Python.Version, lf.Inputs.Python.Platforms[0], f.lock, cache)
			}
			return nil, nil, err
		}
		paths = append(paths, blobcache.BlobPath(cache, a.Sha256))
	}
	return lf, paths, nil
}

func runBundleExport(ctx context.Context, g *globals, o *bundleExportOptions, args []string, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if o.to == "" {
		return exitcode.Errorf(exitcode.Usage, "bundle export: --to is required (FILE.tar, oci:DIR or REGISTRY/REPO[:tag])")
	}
	if bundle.KindOf(o.to) == bundle.KindRegistry {
		if err := checkTransport("--to "+o.to+" (FILE.tar for a tar file)", o.to); err != nil {
			return err
		}
	}
	rep := g.reporter(stderr)
	defer rep.Wait()
	lopts, err := o.registry.options(rep)
	if err != nil {
		return err
	}
	lf, paths, err := bundleFiles(ctx, &o.resolve, args, rep)
	if err != nil {
		return err
	}
	ts, err := layers.Epoch()
	if err != nil {
		return err
	}
	res, err := bundle.Export(ctx, lf, paths, o.to, bundle.WithEpoch(ts), bundle.WithToolVersion(buildVersion()), bundle.WithLayerOptions(lopts...),
		bundle.WithCacheDir(pipeline.CacheDir(o.resolve.cache)))
	rep.Wait()
	if err != nil {
		return err
	}
	if out == outJSON {
		return printJSON(stdout, res)
	}
	keepResult(stdout, res)
	rep.Printf("bundle of %d jars%s (%d bytes, lock %s) written to %s", res.Jars, wheelCount(res.Wheels), res.Bytes, res.LockHash, res.To)
	_, err = fmt.Fprintf(stdout, "%s\n%s\n", res.To, res.Digest)
	return err
}

type bundleImportOptions struct {
	s3               s3StoreFlags
	registry         registryFlags
	cache            string
	lock             string
	force            bool
	verifySignatures bool
	keyring          string
}

func newBundleImportCmd(g *globals) *cobra.Command {
	o := &bundleImportOptions{}
	c := &cobra.Command{
		Use:   "import FROM [--cache DIR] [--store URL] [--lock FILE]",
		Short: "Verify a bundle and put its jars into the cache or a store, fetching nothing",
		Long: `bundle import reads a bundle (FILE.tar, oci:DIR[:tag|@digest] or a registry
reference) and checks all of it before it writes anything: the index, the lock's
sha256 and lock hash, every jar and wheel against the lock, no file extra,
missing or out of order, the SBOM against the lock. A bundle that fails is
refused (exit 65) naming the file. The jars and wheels go into the cache (--cache, default $PREBAKE_CACHE), or
with --store into a jar store as bake s3 writes it, with the jars' signatures
(.asc) the bundle carries; the lock is written to --lock.

A registry repository named without a tag or digest is read at the tag bundle
export gives, the lock hash: that of the existing --lock if there is one, else
the repository's only tag of that form (several: exit 64 listing them; none:
exit 66). "latest" is never assumed.

An existing --lock is never replaced by another one: unless it is the same lock
(or --force is given), the bundle is refused (exit 65) before anything is
written, and the difference is printed. With --verify-signatures, every jar must
record a signer pinned in --keyring and carry a signature made by that key
(exit 65 naming the jar). No repository is asked: bake image, bake s3 and
submit --frozen (--verify-signatures too) then run with --offline.`,
		Example: `  prebake bundle import jobs.bundle.tar --cache /var/cache/prebake --lock prebake.lock
  prebake bundle import registry.internal/team/bundles:<lock-hash> --store s3://jars/prebake`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runBundleImport(c.Context(), g, o, args[0], c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.cache, "cache", "", "cache directory to fill (default $PREBAKE_CACHE, else the user cache)")
	fs.StringVar(&o.lock, "lock", "prebake.lock", "write the bundle's lock here; an existing, different lock is not replaced (exit 65) without --force")
	fs.BoolVar(&o.force, "force", false, "replace an existing --lock that differs from the bundle's (the difference is printed)")
	fs.BoolVar(&o.verifySignatures, "verify-signatures", false, "check every jar's signature (.asc, carried by the bundle) against --keyring and the signer the lock records (exit 65 naming the jar)")
	fs.StringVar(&o.keyring, "keyring", defaultKeyring, "armored public keys pinned for --verify-signatures (see prebake keys)")
	o.s3.add(fs)
	o.s3.addConcurrency(fs)
	o.registry.add(fs)
	return c
}

func runBundleImport(ctx context.Context, g *globals, o *bundleImportOptions, from string, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if bundle.KindOf(from) == bundle.KindRegistry {
		if err := checkTransport("bundle import "+from+" (FILE.tar for a tar file)", from); err != nil {
			return err
		}
	}
	rep := g.reporter(stderr)
	defer rep.Wait()
	lopts, err := o.registry.options(rep)
	if err != nil {
		return err
	}
	var store *s3store.Store
	if o.s3.store != "" {
		sopts, err := o.s3.options(rep)
		if err != nil {
			return err
		}
		if store, err = s3store.Open(ctx, o.s3.store, sopts...); err != nil {
			return err
		}
	}
	cache := o.cache
	switch {
	case cache == "" && store != nil:
		// Only a store: the jars are staged in a cache of this run's.
		tmp, err := os.MkdirTemp("", "prebake-import-*")
		if err != nil {
			return exitcode.New(exitcode.CantCreate, err)
		}
		defer os.RemoveAll(tmp)
		cache = tmp
	default:
		cache = pipeline.CacheDir(cache)
	}
	kr, err := (&resolveFlags{verifySignatures: o.verifySignatures, keyring: o.keyring}).signatures()
	if err != nil {
		return err
	}
	iopts := []bundle.Option{bundle.WithLayerOptions(lopts...), bundle.WithExistingLock(o.lock), bundle.WithForce(o.force)}
	if kr != nil {
		iopts = append(iopts, bundle.WithSignatures(kr))
	}
	// With --force, what is replaced is said (the check is Import's own
	// without it).
	var replaced error
	res, err := bundle.Import(ctx, from, cache, iopts...)
	if err == nil && o.force {
		replaced = bundle.CheckReplace(o.lock, res.Lock, from)
	}
	if err != nil {
		var ld *bundle.LockDiffersError
		if errors.As(err, &ld) {
			rep.Wait()
			writeLockDiff(stderr, ld)
			return fmt.Errorf("%w; pass --force to replace it, or --lock another file", err)
		}
		return err
	}
	js := jsondoc.BundleImport{ImportResult: res, Lock: o.lock}
	if o.cache != "" || store == nil {
		js.Cache = cache
	}
	if store != nil {
		if _, err := store.Bake(ctx, res.Lock, lock.LocalJars(res.Paths)); err != nil {
			return err
		}
		js.Store = store.URL()
	}
	if err := atomicfile.Write(o.lock, res.LockData, 0o644); err != nil {
		return exitcode.New(exitcode.CantCreate, fmt.Errorf("writing lockfile %s: %w", o.lock, err))
	}
	if ld := (*bundle.LockDiffersError)(nil); errors.As(replaced, &ld) {
		rep.Warnf("%s: replaced (--force) by the lock of bundle %s", o.lock, from)
		rep.Wait()
		if !g.quiet {
			writeLockDiff(stderr, ld)
		}
	}
	rep.Wait()
	if out == outJSON {
		return printJSON(stdout, js)
	}
	keepResult(stdout, js)
	where := js.Cache
	if js.Store != "" {
		where = js.Store
	}
	sigs := ""
	if res.Signatures > 0 {
		sigs = fmt.Sprintf(", %d signatures", res.Signatures)
	}
	_, err = fmt.Fprintf(stdout, "imported %d jars%s%s (%d bytes, lock %s) into %s; lock written to %s\n", res.Jars, wheelCount(res.Wheels), sigs, res.Bytes, res.LockHash, where, o.lock)
	return err
}

// writeLockDiff prints how the bundle's lock differs from the existing
// one: the lock diff (prebake lock diff's text), or the signers that
// differ.
func writeLockDiff(w io.Writer, ld *bundle.LockDiffersError) {
	if ld.Diff != nil && !ld.Diff.Equal {
		lockdiff.WriteText(w, ld.Diff)
	}
	for _, s := range ld.Signers {
		fmt.Fprintf(w, "signer changed: %s\n", s)
	}
}
