package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/resolver/repo"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// optionHints holds, for each library option that a flag sets, the hint
// that names the flag. Libraries name their own options in errors
// (errdefs.OptionError); the edge adds the flag, here and in the
// backends' adapters (backendInfo.OptionHints).
var optionHints = withBackendHints(map[string]string{
	"layers.BakeInput.JarsDir":        "flag --jars-dir",
	"layers.BakeInput.Target":         "flag --target",
	"layers.BakeInput.Tag":            "flag --tag",
	"layers.BakeInput.Platforms":      "flag --platform",
	"layers.BakeInput.SparkHome":      "flag --spark-home",
	"layers.WithCompression":          "flag --compression",
	"layers.WithBasicAuth":            "check --registry-auth",
	"s3store.WithEndpoint":            "flag --endpoint",
	"s3store.WithConcurrency":         "flag --concurrency",
	"s3store.WithExpires":             "flag --expires",
	"s3store.URLStyle":                "flag --url-style",
	"s3store.Open":                    "flag --store",
	"pipeline.ParseShard":             "flag --shard",
	"pipeline.PythonRequest.Version":  "flag --python-version",
	"pipeline.PythonRequest.Platform": "flag --python-platform",
	"pipeline.PythonTargetFromImage":  "give --python-version and --python-platform, or use an image with python3",

	"resolver.Request.Frozen":                "stale (--frozen): run without --frozen to update the lock",
	"resolver.Request.LockPath":              "--frozen needs --lock",
	"resolver.Request.Offline":               "run without --offline to fetch it again",
	"resolver.Request.ChecksumPolicy":        "set by --checksum-policy=strict",
	"resolver.Request.NoDefaultRepositories": "--no-default-repositories needs --repositories",
	"resolver.Request.Settings":              "--settings and --ivy-settings cannot be combined",
	"resolver.Request.IvySettings":           "flag --ivy-settings",
	"resolver.Request.IvyHome":               "flag --ivy",
	"resolver.Request.IvyVersion":            "flag --ivy-version (or prebake.yaml ivyVersion)",
	"resolver.Request.Excludes":              "flag --exclude-packages (or spark.jars.excludes)",
	"resolver.Request.Signatures":            "checked by --verify-signatures against --keyring; pin a signer with: prebake keys add",
	"resolver.Request.MaxRetryWait":          "the limit is --max-retry-wait",

	"outdated.Input.Set": "flag --set",

	"pipeline.ImageFrom.Ref":   "flag --image-from",
	"pipeline.StoreTarget.URL": "flag --store",
})

// withBackendHints is hints with the option hints of every backend
// (newAdapters).
func withBackendHints(hints map[string]string) map[string]string {
	for _, a := range newAdapters() {
		for opt, h := range a.Describe().OptionHints {
			hints[opt] = h
		}
	}
	return hints
}

// errorHints are hints for typed library errors that no single option
// explains: each returns its hint and whether err is its. The backends'
// are their adapters' (backendInfo.ErrorHints).
var errorHints = withBackendErrorHints([]func(err error) (string, bool){
	func(err error) (string, bool) {
		var e *s3store.SetMissingError
		if !errors.As(err, &e) {
			return "", false
		}
		return fmt.Sprintf("run `prebake bake s3 --store %s --lock <lockfile>` first", submit.ShellQuote([]string{strings.TrimSuffix(e.Store, "/")})), true
	},
	func(err error) (string, bool) {
		return "give --image-from or --store", errors.Is(err, rewrite.ErrNoClusterJars)
	},
	func(err error) (string, bool) {
		return "the check is --strict (strict: in prebake.yaml, $PREBAKE_STRICT); a base that keeps Spark elsewhere takes --spark-home", errors.Is(err, layers.ErrStrict)
	},
	func(err error) (string, bool) {
		var e *repo.M2POMOnlyError
		return "or leave ~/.m2 out of the chain: --no-default-repositories --repositories " + repo.DefaultCentralURL + " (and the other repositories you need)", errors.As(err, &e)
	},
})

// withBackendErrorHints is hints and the error hints of every backend
// (newAdapters).
func withBackendErrorHints(hints []func(err error) (string, bool)) []func(err error) (string, bool) {
	for _, a := range newAdapters() {
		hints = append(hints, a.Describe().ErrorHints...)
	}
	return hints
}

// warningHints name, per command, the flags that fix each kind of rewrite
// warning (the library's warnings name none).
var warningHints = map[string]map[rewrite.WarningKind]string{
	"rewrite": {
		rewrite.WarnFileURLs:    "give --store s3://bucket/prefix or --image-from REF",
		rewrite.WarnLayoutImage: "prebake bake image --target registry.example.com/team/spark-jobs pushes it; give that reference to --image-from",
		rewrite.WarnImageNotK8s: "flag --image-from",
	},
	"submit": {
		rewrite.WarnFileURLs:    "give --store s3://bucket/prefix or --image-target REPO",
		rewrite.WarnLayoutImage: "give --image-target a registry repository (registry.example.com/team/spark-jobs)",
		rewrite.WarnImageNotK8s: "flag --image-target",
		rewrite.WarnS3AURLs:     s3aHint,
	},
}

// s3aHint is the way around s3a URLs' needs (pipeline.S3AWarning).
const s3aHint = "--url-style presigned needs neither"

// withWarningHints adds to each of command's rewrite warnings the hint
// naming the flags that fix it, in place: before they are printed, on
// stderr or in -o json.
func withWarningHints(command string, ws []rewrite.Warning) {
	for i, w := range ws {
		if h, ok := warningHints[command][w.Kind]; ok {
			ws[i].Text += "; " + h
		}
	}
}

// hintError is err with the CLI's hints appended to its message; it keeps
// err's chain (and so its exit code).
type hintError struct {
	err   error
	hints []string
}

func (e *hintError) Error() string { return e.err.Error() + "; " + strings.Join(e.hints, "; ") }
func (e *hintError) Unwrap() error { return e.err }

// hintsFor returns the hints naming the CLI flags for the library option
// (the outermost errdefs.OptionError) and the typed errors err reports.
func hintsFor(err error) []string {
	if err == nil {
		return nil
	}
	var hints []string
	if hint, ok := optionHints[errdefs.OptionOf(err)]; ok {
		hints = append(hints, hint)
	}
	for _, h := range errorHints {
		if hint, ok := h(err); ok {
			hints = append(hints, hint)
		}
	}
	return hints
}

// withHint adds to err the hints naming the CLI flags (hintsFor), if there
// are any.
func withHint(err error) error {
	var he *hintError
	if errors.As(err, &he) {
		return err // hinted already
	}
	hints := hintsFor(err)
	if len(hints) == 0 {
		return err
	}
	return &hintError{err: err, hints: hints}
}

// withHintMessage is a result's one-line message (what the library says of
// err) with err's hints, for -o json: the same text the CLI prints.
func withHintMessage(msg string, err error) string {
	if hints := hintsFor(err); msg != "" && len(hints) > 0 {
		return msg + "; " + redact.Line(strings.Join(hints, "; "))
	}
	return msg
}
