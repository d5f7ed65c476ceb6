package layers

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/lock"
)

// DefaultPythonDir is where a lock's wheels go in the image: one merged
// site-packages tree, outside Spark's home (a base upgrade never shadows
// it) and outside any Python's own site-packages (no interpreter's
// packages are replaced; a job's packages come after pyspark's on the
// path). The image's PYTHONPATH names it.
const DefaultPythonDir = "/opt/prebake/python/site-packages"

// AnnotationPython holds PythonAnnotation as JSON on an image baked from a
// lock with wheels.
const AnnotationPython = "dev.prebake.python"

// RolePython is the role (LayerInfo.Role) of the layer of a lock's wheels.
const RolePython = "python"

// PythonAnnotation is the value of dev.prebake.python: the site-packages
// directory and the wheels installed into it, in lock order.
type PythonAnnotation struct {
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

func cleanPythonDir(d string) (string, error) {
	if d == "" {
		return DefaultPythonDir, nil
	}
	if !path.IsAbs(d) || strings.ContainsAny(d, ":\x00") {
		return "", errdefs.Optionf(errdefs.BadArgument, "layers.BakeInput.PythonDir", "Python directory %q: must be an absolute path without ':'", d)
	}
	return path.Clean(d), nil
}

// wheelPaths is the local files of the lock's wheels (BakeInput.Wheels).
func (bk *baking) wheelPaths(ctx context.Context) ([]string, error) {
	n := len(bk.in.Lock.Wheels())
	if n == 0 {
		return nil, nil
	}
	paths, err := bk.in.Wheels(ctx)
	if err != nil {
		return nil, err
	}
	if len(paths) != n {
		return nil, errdefs.Errorf(errdefs.Internal, "bake: %d paths for %d wheels", len(paths), n)
	}
	return paths, nil
}

// buildPythonLayer installs the lock's wheels (their files at paths) and
// builds one layer of the merged tree under dir. Nothing but the bake's
// temporary directory is written; a refused wheel stops the bake before
// any layer is written to the target.
func buildPythonLayer(ctx context.Context, lf *lock.File, paths []string, dir string, bk *baking) (builtJarLayer, error) {
	o := bk.o
	ws, err := sitepkgs.WheelsOf(lf, paths)
	if err != nil {
		return builtJarLayer{}, err
	}
	tmp, err := o.tempDir()
	if err != nil {
		return builtJarLayer{}, err
	}
	staging, err := os.MkdirTemp(tmp, "wheels-")
	if err != nil {
		return builtJarLayer{}, errdefs.New(errdefs.CantWrite, err)
	}
	// Streaming: the layer's files are read from the wheels as the tar
	// is written (checked against each wheel's RECORD as they are read),
	// not written to staging first and read back.
	tree, err := sitepkgs.Stage(ctx, ws, staging, bk.epoch, sitepkgs.Streaming())
	if err != nil {
		return builtJarLayer{}, err
	}
	defer tree.Close()
	// The members are inflated ahead of the tar writer on every core.
	pf := tree.Prefetch(ctx, runtime.GOMAXPROCS(0), prefetchBudget)
	defer pf.Close()
	l, err := buildLayer(ctx, treeFiles(tree, dir, pf), bk.epoch, o)
	if err != nil {
		return builtJarLayer{}, err
	}
	o.logger.Printf("python layer %s: %d wheels, %d files under %s", l.digest, len(tree.Wheels), len(tree.Entries), dir)
	return builtJarLayer{layer: l, info: LayerInfo{Digest: l.digest.String(), DiffID: l.diffID.String(), Size: l.size, Files: tree.Wheels, Role: RolePython}}, nil
}

// prefetchBudget bounds the bytes of the Python layer's files read ahead
// of the tar writer.
const prefetchBudget = 64 << 20

// treeFiles are the layer files of tree under dir, read through pf (the
// tar writer opens them in the tree's order: the names keep it under one
// dir).
func treeFiles(tree *sitepkgs.Tree, dir string, pf *sitepkgs.Prefetcher) []File {
	files := make([]File, len(tree.Entries))
	for i, e := range tree.Entries {
		files[i] = File{Name: path.Join(dir, e.Path), Mode: int64(e.Mode.Perm()), Size: e.Size, ID: e.Sha256,
			Open: func() (io.ReadCloser, error) { return pf.Open(i) }}
	}
	return files
}

// WithPythonPath returns img with dir appended to the PYTHONPATH of its
// config's Env (set to dir when it has none; unchanged when dir is on it
// already). Spark's PythonRunner (driver) and PythonWorkerFactory
// (executors) put the environment's PYTHONPATH after pyspark's own, so the
// job's packages never shadow pyspark and py4j.
func WithPythonPath(img v1.Image, dir string) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg := *cf.Config.DeepCopy()
	cfg.Env = pythonPathEnv(cfg.Env, dir)
	return mutate.Config(img, cfg)
}

// pythonPathEnv is env with dir appended to PYTHONPATH (the last
// PYTHONPATH entry wins, as in a process environment).
func pythonPathEnv(env []string, dir string) []string {
	out := slices.Clone(env)
	at := -1
	for i, kv := range out {
		if strings.HasPrefix(kv, "PYTHONPATH=") {
			at = i
		}
	}
	if at < 0 {
		return append(out, "PYTHONPATH="+dir)
	}
	old := strings.TrimPrefix(out[at], "PYTHONPATH=")
	if old == "" {
		out[at] = "PYTHONPATH=" + dir
	} else if !slices.Contains(strings.Split(old, ":"), dir) {
		out[at] = "PYTHONPATH=" + old + ":" + dir
	}
	return out
}

// pythonAnnotation is the dev.prebake.python value of a bake.
func pythonAnnotation(dir string, files []string) string {
	b, _ := json.Marshal(PythonAnnotation{Dir: dir, Files: files})
	return string(b)
}
