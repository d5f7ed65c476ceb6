// Package depcheck enforces the import direction between prebake's packages.
package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/prebake/prebake"

// goList runs go list with args and returns its fields.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// allowed says which prebake packages each package may import
// (transitively). A key covers its subpackages unless a longer key names
// them; an entry ending in "/" allows everything under it. Every package of
// the module must be covered by a key (new packages are placed here on
// purpose), except the free ones below.
var allowed = map[string][]string{
	// What failed, for every library (a leaf).
	"errdefs": {},
	// The contract: the lockfile, its hash and checks.
	"lock": {"errdefs", "internal/"},
	// Pure model and libraries. None of them imports the resolver except
	// the resolver itself; the stores and submit see only the lock.
	"maven":    {"internal/coordpart"},
	"resolver": {"errdefs", "maven", "lock", "internal/"},
	// The repository side (resolver → repo → {cache, ivysettings,
	// mavensettings}): the chain, the fetch, retries, checksums,
	// snapshots, the locked fetch and the signatures; never the engine.
	"resolver/repo": {"errdefs", "maven", "lock", "resolver/cache", "resolver/ivysettings", "resolver/mavensettings", "internal/"},
	// resolver's leaf subjects: each imports none of its siblings nor
	// the resolver, and layers, s3store and submit import none of them.
	"resolver/cache":         {"errdefs", "lock", "internal/"},
	"resolver/ivysettings":   {"errdefs", "internal/"},
	"resolver/mavensettings": {"errdefs", "internal/"},
	"layers":                 {"errdefs", "lock", "internal/"},
	"s3store":                {"errdefs", "lock", "internal/"},
	"submit":                 {"errdefs", "lock", "internal/"},

	// The Python half (a PySpark job's wheels), a leaf like repo: its
	// inputs (requirements, pyproject.toml, pylock.toml, uv.lock),
	// versions and markers; never the Maven resolver nor its model.
	"resolver/pypi": {"errdefs", "lock", "resolver/cache", "internal/"},

	// Orchestration (resolve → bake → rewrite) over the libraries; no
	// backend (no client-go).
	"pipeline": {"errdefs", "maven", "lock", "resolver", "layers", "s3store", "submit", "internal/"},
	// Bundles (air gap): the lock, its SBOM, the cache (resolver's
	// staging) and the OCI artifact (layers); no store, no submit.
	"pipeline/bundle": {"errdefs", "maven", "lock", "resolver", "layers", "internal/"},
	// The upgrade report: both lines' resolutions (resolver), the base
	// image's classpath report (layers) and the native submitter's
	// objects per line (submit/k8s/native); no backend call.
	"pipeline/upgrade": {"errdefs", "maven", "lock", "resolver", "layers", "submit", "internal/"},
	// outdated: the newer versions of a lock's direct jars (resolver)
	// and wheels (resolver/pypi, pipeline's Python target), kept to a
	// base image's lines (layers), and the re-lock; no store, no backend
	// call.
	"pipeline/outdated": {"errdefs", "maven", "lock", "resolver", "layers", "s3store", "submit", "pipeline", "internal/"},
	// internal helpers: never a public library package.
	"internal":          {"errdefs", "internal/"},
	"internal/lockdiff": {"errdefs", "lock", "internal/"},
	"internal/sbom":     {"errdefs", "lock", "internal/"},
	// A lock's wheels merged into one site-packages tree (the image layer
	// and the store's archive share it).
	"internal/sitepkgs": {"errdefs", "lock", "internal/"},
	// The CLI's JSON documents (the edge's types and their schemas): they
	// embed the libraries' results.
	"internal/jsondoc": {"errdefs", "maven", "lock", "resolver", "layers", "s3store", "submit", "pipeline", "internal/"},
	// The tests' real cluster builds its images with layers.
	"internal/testenv/cluster": {"errdefs", "lock", "layers", "internal/"},
	// The API-server-only test world (the shared kube-apiserver, the test
	// kubelet, the fault proxy) pushes the test base image (layers'
	// registrytest) and records the native equivalence cases
	// (submit/k8s/native/nativetest).
	"internal/testenv/k8senv": {"errdefs", "lock", "layers", "submit", "internal/"},
	// The test bed's servers but the node (registry, nginx, versitygw, the
	// standalone master and worker): their one launcher and the attach;
	// the helpers (registrytest, s3test, mavenhttp) and the node's package
	// import it, never the other way (apart), and no SDK.
	"internal/testenv/bed": {"errdefs", "internal/"},
	// The tests' counting proxy in front of the Python index reads the
	// machine's pip configuration as prebake does.
	"internal/testenv/pyindex": {"errdefs", "lock", "resolver/cache", "resolver/pypi", "internal/"},
	// The warm Job's test helpers resolve the sets they warm.
	"internal/testenv/warmjob": {"errdefs", "maven", "lock", "resolver", "internal/"},

	// PEP 440 versions, one implementation for the Python resolver and
	// the lock tooling: a leaf.
	"internal/pep440": {},
}

// edgeOnly are packages only the edge (the free packages) may import:
// libraries say what failed (errdefs), never which exit code to use. The
// value lists the exceptions still to be removed.
var edgeOnly = map[string][]string{
	"internal/exitcode": {"internal/exitcode"},
	// The terminal bars (mpb): libraries name only internal/progress/task.
	// internal/jsondoc declares cmd's documents, some of pipeline's types.
	"internal/progress": {"internal/progress", "pipeline", "internal/jsondoc"},
}

// apart lists, for a package, the packages under the same rule that must not
// import it (their deps included): the backends and the rewrite are siblings
// under submit, each seeing only the model and the core.
// The backends are the contract's (submit.Backend) implementations: pipeline
// runs one that cmd constructs, and imports none; the K8s backend runs
// spark-submit through submit/local's runner, which imports no other
// backend.
var apart = map[string][]string{
	"submit/rewrite": {"submit/k8s", "submit/rest", "submit/local", "submit/connect"},
	"submit/k8s":     {"submit/rewrite", "submit/rest", "submit/local", "submit/connect", "pipeline"},
	"submit/rest":    {"submit/rewrite", "submit/k8s", "submit/local", "submit/connect", "pipeline"},
	"submit/local":   {"submit/rewrite", "submit/rest", "submit/connect", "pipeline"},
	"submit/connect": {"submit/rewrite"},
	// The bed (internal/testenv/bed) launches no node and needs no client-go.
	"internal/testenv/cluster": {"internal/testenv/bed"},
}

// free packages may import anything in the module: the edge (cmd), dev
// tools and test-only packages.
var free = []string{"cmd", "hack", "examples", "test", "internal/depcheck"}

// sdk says which packages alone may import each SDK directly (their
// subpackages included); the others reach it only through them. The tests'
// cluster (internal/testenv/cluster) and API server (internal/testenv/k8senv)
// hand their tests a client-go client;
// hack/sparkimage makes a layer of a root file system tarball (symbolic
// links, owners), which layers' files cannot hold.
var sdk = map[string][]string{
	"github.com/google/go-containerregistry":   {"layers", "hack/sparkimage"},
	"github.com/containerd/stargz-snapshotter": {"layers"},
	"github.com/aws/aws-sdk-go-v2":             {"s3store"},
	"k8s.io/client-go":                         {"submit/k8s", "internal/testenv/cluster", "internal/testenv/k8senv"},
	"github.com/ProtonMail/go-crypto":          {"internal/pgpverify"},
	"google.golang.org/grpc":                   {"submit/connect"},
}

// sdkNot lists, for an SDK, the packages under its owners that must not
// import it: the native builder returns objects, and submit/k8s creates
// them (client-go in one package).
var sdkNot = map[string][]string{
	"k8s.io/client-go": {"submit/k8s/native"},
}

// under reports whether rel is pkg or below it.
func under(rel, pkg string) bool { return rel == pkg || strings.HasPrefix(rel, pkg+"/") }

// rule returns the key of allowed that covers rel (the longest), or "".
func rule(rel string) string {
	best := ""
	for k := range allowed {
		if under(rel, k) && len(k) > len(best) {
			best = k
		}
	}
	return best
}

func TestImportDirection(t *testing.T) {
	for _, imp := range goList(t, module+"/...") {
		rel := strings.TrimPrefix(imp, module+"/")
		for _, d := range goList(t, "-f", `{{join .Imports "\n"}}`, imp) {
			for s, owners := range sdk {
				if under(d, s) && !slices.ContainsFunc(owners, func(o string) bool { return under(rel, o) }) {
					t.Errorf("%s imports %s, which belongs in %s only", rel, d, strings.Join(owners, ", "))
				}
				if under(d, s) && slices.ContainsFunc(sdkNot[s], func(o string) bool { return under(rel, o) }) {
					t.Errorf("%s imports %s: it returns objects, and %s alone calls the SDK", rel, d, strings.Join(owners, ", "))
				}
			}
		}
		if slices.ContainsFunc(free, func(f string) bool { return under(rel, f) }) {
			continue
		}
		key := rule(rel)
		if key == "" {
			t.Errorf("%s has no import rule: add it to allowed in internal/depcheck", rel)
			continue
		}
		ok := append([]string{key}, allowed[key]...)
		for _, d := range goList(t, "-deps", "-f", "{{.ImportPath}}", imp) {
			if !strings.HasPrefix(d, module+"/") {
				continue
			}
			drel := strings.TrimPrefix(d, module+"/")
			if except, ok := edgeOnly[drel]; ok && !slices.ContainsFunc(except, func(e string) bool { return under(rel, e) }) {
				t.Errorf("%s must not import %s: only the edge (cmd) does", rel, drel)
			}
			if slices.ContainsFunc(apart[drel], func(p string) bool { return under(rel, p) }) {
				t.Errorf("%s must not import %s: they are apart", rel, drel)
			}
			good := false
			for _, a := range ok {
				if under(drel, a) || (strings.HasSuffix(a, "/") && strings.HasPrefix(drel, a)) {
					good = true
				}
			}
			if !good {
				t.Errorf("%s must not import %s", rel, drel)
			}
		}
	}
}

// testsOnExitCodes are the library packages whose tests still assert CLI
// exit codes (internal/exitcode) instead of error kinds (errdefs); the
// exit-code table belongs to cmd's tests. The list only shrinks (it is
// empty now: a library test that imports internal/exitcode fails).
var testsOnExitCodes []string

// TestLibraryTestsAssertKinds: no library test file imports
// internal/exitcode, except those of testsOnExitCodes (and a listed
// package that no longer does is an error, so the list is kept short).
func TestLibraryTestsAssertKinds(t *testing.T) {
	const exitcode = module + "/internal/exitcode"
	still := map[string]bool{}
	for _, line := range goList(t, "-f", `{{.ImportPath}}|{{join .TestImports ","}},{{join .XTestImports ","}}`, module+"/...") {
		imp, tests, _ := strings.Cut(line, "|")
		rel := strings.TrimPrefix(imp, module+"/")
		if rel == "internal/exitcode" || slices.ContainsFunc(free, func(f string) bool { return under(rel, f) }) {
			continue
		}
		if !slices.Contains(strings.Split(tests, ","), exitcode) {
			continue
		}
		still[rel] = true
		if !slices.Contains(testsOnExitCodes, rel) {
			t.Errorf("%s's tests import internal/exitcode: assert errdefs kinds (errdefs.KindOf, errors.Is(err, errdefs.X)) instead", rel)
		}
	}
	for _, p := range testsOnExitCodes {
		if !still[p] {
			t.Errorf("%s's tests no longer import internal/exitcode: remove it from testsOnExitCodes", p)
		}
	}
}
