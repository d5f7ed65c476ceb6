package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
)

// s3StoreFlags are the flags that name and reach a jar store (bake s3, warm).
type s3StoreFlags struct {
	store       string
	endpoint    string
	pathStyle   bool
	region      string
	concurrency int
}

func (f *s3StoreFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.store, "store", "", "jar store: s3://bucket/prefix or file:///dir (default $PREBAKE_STORE)")
	fs.StringVar(&f.endpoint, "endpoint", "", "S3 endpoint URL for S3-compatible servers (default: AWS)")
	fs.BoolVar(&f.pathStyle, "path-style", false, "path-style bucket addressing (endpoint/bucket/key)")
	fs.StringVar(&f.region, "region", "", "AWS region (default: the AWS config chain, else us-east-1)")
}

// addConcurrency adds --concurrency, for the commands that upload (bake
// s3, warm, submit).
func (f *s3StoreFlags) addConcurrency(fs *pflag.FlagSet) {
	fs.IntVar(&f.concurrency, "concurrency", 8, "uploads and HEADs in flight")
}

// options turns the flags into s3store options; credentials come from the
// AWS chain (env, profile, web identity). Steps and uploads are reported to
// rep (nil reports nothing).
func (f *s3StoreFlags) options(rep *progress.Reporter) ([]s3store.Option, error) {
	if f.store == "" {
		return nil, exitcode.Errorf(exitcode.Usage, "--store is required (s3://bucket/prefix or file:///dir; or store: in prebake.yaml, or $PREBAKE_STORE)")
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	opts := []s3store.Option{s3store.WithPathStyle(f.pathStyle), s3store.WithRegion(f.region)}
	if f.concurrency > 0 {
		opts = append(opts, s3store.WithConcurrency(f.concurrency))
	}
	if f.endpoint != "" {
		opts = append(opts, s3store.WithEndpoint(f.endpoint))
	}
	if rep != nil {
		opts = append(opts, s3store.WithLogger(rep), s3store.WithProgress(rep))
	}
	return opts, nil
}

// check refuses a store URL without a scheme (bucket/prefix would silently
// become a local directory) and S3 flags given with a file:// store.
func (f *s3StoreFlags) check() error {
	if !strings.Contains(f.store, "://") {
		return s3store.NoScheme(f.store)
	}
	if isFileStore(f.store) && (f.endpoint != "" || f.pathStyle) {
		return exitcode.Errorf(exitcode.Usage, "--store %s is a local directory: --endpoint and --path-style are for s3:// stores", redact.URL(f.store))
	}
	return nil
}

// s3aConf is the Spark conf that makes s3a:// URLs of an S3-compatible
// store readable (pipeline.S3AConf).
func (f *s3StoreFlags) s3aConf(style s3store.URLStyle) map[string]string {
	return pipeline.S3AConf(f.store, f.endpoint, f.pathStyle, style)
}

// storeTarget is the store of the flags as a pipeline target that reads
// (rewrite --store) or uploads (submit --store) sets.
func (f *storeURLFlags) storeTarget(s *s3StoreFlags, rep *progress.Reporter) (*pipeline.StoreTarget, error) {
	opts, err := f.storeOptions(s, rep)
	if err != nil {
		return nil, err
	}
	return &pipeline.StoreTarget{URL: s.store, Options: opts, URLStyle: f.urlStyle, Conf: s.s3aConf(f.urlStyle)}, nil
}

// submitTarget is where submit puts the resolved jars: --store or
// --image-target (nil: neither).
func submitTarget(f *submitFlags, rep *progress.Reporter) (pipeline.JarTarget, error) {
	switch {
	case f.s3.store != "":
		return f.storeTarget(&f.s3, rep)
	case f.imageTarget != "":
		opts, err := f.registry.options(rep)
		if err != nil {
			return nil, err
		}
		return &pipeline.ImageTarget{Repo: f.imageTarget, Options: opts, SparkHome: f.sparkHome, Strict: f.strict.on, StrictKinds: f.strict.kinds}, nil
	}
	return nil, nil
}

func isFileStore(store string) bool { return strings.HasPrefix(store, "file:") }

func isS3Store(store string) bool { return pipeline.IsS3Store(store) }

// storeURLFlags choose how the store's jars are named in spark.jars (bake
// s3, rewrite --store, submit --store).
type storeURLFlags struct {
	urlStyle s3store.URLStyle
	expires  time.Duration
}

// presignedAlert says that presigned URLs are secrets that expire (bake
// s3, submit --url-style presigned). The expiry changes the outcome: -q
// does not hide it.
func presignedAlert(rep *progress.Reporter, expires time.Duration) {
	rep.Alertf("presigned URLs are bearer credentials valid for %s: treat the output as a secret, and make --expires outlast the job", expires)
}

func (f *storeURLFlags) add(fs *pflag.FlagSet) {
	fs.StringVar((*string)(&f.urlStyle), "url-style", string(s3store.StyleS3A), "store URL style: s3a (needs hadoop-aws in the image), presigned (bearer URLs; see --expires) or https")
	durationVar(fs, &f.expires, "expires", 6*time.Hour, "presigned URLs: how long they stay valid; must outlast the job")
}

// storeOptions are the store flags' options plus the URL lifetime, when
// one is set (rewrite --store, submit --store).
func (f *storeURLFlags) storeOptions(s *s3StoreFlags, rep *progress.Reporter) ([]s3store.Option, error) {
	opts, err := s.options(rep)
	if err != nil {
		return nil, err
	}
	if f.expires > 0 {
		opts = append(opts, s3store.WithExpires(f.expires))
	}
	return opts, nil
}

// s3aWarning is printed when a store's URLs are s3a:// ones: the library's
// warning and the CLI's way around it (as submit's warning hint).
const s3aWarning = pipeline.S3AWarning + "; " + s3aHint

type bakeS3Options struct {
	s3      s3StoreFlags
	resolve resolveFlags
	storeURLFlags
	verify bool
}

func newBakeS3Cmd(g *globals) *cobra.Command {
	o := &bakeS3Options{}
	c := &cobra.Command{
		Use:   "s3 [coordinates...]",
		Short: "Upload the resolved jars to a content-addressed S3 store and print the spark.jars value",
		Long: `bake s3 resolves (or reads --lock), uploads every jar not yet in the store to
<prefix>/jars/sha256/<hex>/<file>, then writes the set's manifest
<prefix>/sets/<lock-hash>.json, and prints the spark.jars value.

A set already in the store costs one GET; --verify also HEADs every jar and
re-uploads missing ones. URL styles: s3a (default; needs hadoop-aws and the AWS
SDK in the image), presigned (needs nothing, but the URLs are bearer credentials
valid for --expires, which must outlast the job), https (public-read buckets).

A PySpark job's wheels (--py-requirements FILE, or a --lock that has wheels) go
into one content-addressed site-packages archive; after the spark.jars value,
stdout then has its settings, one key=value a line: spark.archives=URL#pydeps
and PYTHONPATH=./pydeps for the executors and the driver. The wheels are chosen
for --python-version and --python-platform (the job image's python3 and platform
tag), else for the target --lock records.`,
		Example: `  prebake bake s3 --store s3://team-spark-jars/prebake --lock prebake.lock
  prebake bake s3 --store s3://jars/prebake --endpoint http://127.0.0.1:7070 --path-style \
    --packages org.apache.spark:spark-avro_2.12:3.5.0 --url-style presigned --expires 12h
  # a local store (the same layout), e.g. for the demo
  prebake bake s3 --store "file://$PWD/.demo/store" --lock .demo/prebake.lock --cache "$PWD/.demo/cache"`,
		RunE: func(c *cobra.Command, args []string) error {
			return runBakeS3(c.Context(), g, o, c.Flags(), args, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	o.s3.add(fs)
	o.s3.addConcurrency(fs)
	o.resolve.pythonWired = true
	o.resolve.add(fs)
	o.storeURLFlags.add(fs)
	fs.BoolVar(&o.verify, "verify", false, "on a hit, HEAD every jar and re-upload missing ones")
	return c
}

// bakeS3JSON is the -o json output (stable; documented in the README).
type bakeS3JSON struct {
	Store     string           `json:"store"`
	LockHash  string           `json:"lockHash"`
	Hit       bool             `json:"hit"`
	Uploaded  int              `json:"uploaded"`
	Skipped   int              `json:"skipped"`
	Repaired  int              `json:"repaired"`
	BytesSent int64            `json:"bytesSent"`
	URLStyle  s3store.URLStyle `json:"urlStyle"`
	SparkJars string           `json:"sparkJars"`
	Jars      []bakeS3JarJS    `json:"jars"`
	// PythonConf (spark.archives and the PYTHONPATH settings,
	// s3store.Store.PythonConf) and Python are a lock with wheels' only.
	PythonConf map[string]string   `json:"pythonConf,omitempty"`
	Python     *jsondoc.BakePython `json:"python,omitempty"`
}

type bakeS3JarJS struct {
	Coord  string `json:"coord"`
	File   string `json:"file"`
	Sha256 string `json:"sha256"`
	Size   int64  `json:"size"`
	URL    string `json:"url"`
}

func runBakeS3(ctx context.Context, g *globals, o *bakeS3Options, fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if err := s3store.CheckStyle(o.urlStyle); err != nil {
		return err
	}
	rep := g.reporter(stderr)
	defer rep.Wait()
	opts, err := o.s3.options(rep)
	if err != nil {
		return err
	}
	opts = append(opts, s3store.WithExpires(o.expires))
	store, err := s3store.Open(ctx, o.s3.store, opts...)
	if err != nil {
		return err
	}
	set, err := resolveBakeSet(ctx, &o.resolve, fs, "bake s3", args, rep, "", nil)
	if err != nil {
		return err
	}
	bopts := []s3store.BakeOption{s3store.WithVerify(o.verify)}
	if set.wheels != nil {
		bopts = append(bopts, s3store.WithWheels(set.wheels))
	}
	res, err := store.Bake(ctx, set.lock, set.jars, bopts...)
	rep.Wait()
	if err != nil {
		return err
	}
	urls, err := store.URLs(ctx, res.Manifest, o.urlStyle)
	if err != nil {
		return err
	}
	pyConf, err := store.PythonConf(ctx, res.Manifest, o.urlStyle)
	if err != nil {
		return err
	}
	switch {
	case !isS3Store(o.s3.store):
		// file:// stores give file: URLs whatever the style.
	case pipeline.S3AURLs(o.s3.store, o.urlStyle):
		rep.Warnf("%s", s3aWarning)
	case o.urlStyle == s3store.StylePresigned:
		presignedAlert(rep, o.expires)
	}
	value := s3store.JarsValue(urls)
	js := bakeS3JSON{Store: store.URL(), LockHash: res.Manifest.LockHash, Hit: res.Hit, Uploaded: res.Uploaded, Skipped: res.Skipped,
		Repaired: res.Repaired, BytesSent: res.BytesSent, URLStyle: o.urlStyle, SparkJars: value, Jars: []bakeS3JarJS{}}
	for i, j := range res.Manifest.Jars {
		js.Jars = append(js.Jars, bakeS3JarJS{Coord: j.Coord, File: j.File, Sha256: j.Sha256, Size: j.Size, URL: urls[i]})
	}
	if len(pyConf) > 0 {
		js.PythonConf = map[string]string{}
		for _, kv := range pyConf {
			js.PythonConf[kv[0]] = kv[1]
		}
		archive, _, _ := strings.Cut(js.PythonConf["spark.archives"], "#")
		js.Python = set.python("", archive)
	}
	if out == outJSON {
		return printJSON(stdout, js)
	}
	keepResult(stdout, js)
	if !g.quiet && js.Python != nil {
		printBakePython(stderr, js.Python, "in the store's archive "+res.Manifest.Python.Archive.Path, g.verbose)
	}
	if _, err := fmt.Fprintln(stdout, value); err != nil {
		return err
	}
	// The Python half's settings, one key=value a line after the jars.
	for _, kv := range pyConf {
		if _, err := fmt.Fprintf(stdout, "%s=%s\n", kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// resolveLockAndJars gets the set to bake (pipeline.LockOrResolve): from
// --lock alone (jars fetched only if something must be uploaded), else by
// resolving. Steps and downloads are reported to rep.
func resolveLockAndJars(ctx context.Context, f *resolveFlags, args []string, rep *progress.Reporter) (*lock.File, lock.Jars, error) {
	req, err := f.bakeRequest(args)
	if err != nil {
		return nil, nil, err
	}
	return pipeline.LockOrResolve(ctx, req, rep)
}

// bakeRequest is the request of the set a bake reads: with no coordinate,
// --lock and what fetches its jars; else the resolution request.
func (f *resolveFlags) bakeRequest(args []string) (resolver.Request, error) {
	if len(f.packages) > 0 || len(args) > 0 {
		return f.request(args...)
	}
	if f.lock == "" {
		return resolver.Request{}, exitcode.Errorf(exitcode.Usage, "give coordinates (--packages) or --lock FILE")
	}
	verifier, err := f.signatures()
	if err != nil {
		return resolver.Request{}, err
	}
	home, defaultRepo := chainEnv()
	return resolver.Request{LockPath: f.lock, Repositories: f.repositories, Settings: f.settings, Offline: f.offline, ChecksumPolicy: f.checksumPolicy, CacheDir: f.cache, Signatures: verifier,
		Home: home, DefaultArtifactRepository: defaultRepo}, nil
}
