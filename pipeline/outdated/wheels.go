package outdated

import (
	"context"
	"os"
	"slices"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/pipeline"
	blobcache "github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/pypi"
)

// newerWheels lists the newer versions of the lock's direct wheels (those
// a line of inputs.python.requirements names; every wheel when none does)
// on the machine's indexes that have a wheel for the lock's target, as
// modules "pypi/<name>". Offline, the index is not asked: unlisted is the
// number of wheels left out.
func newerWheels(ctx context.Context, lf *lock.File, offline bool, userAgent string, log Logger) (_ []Package, unlisted int, _ error) {
	wheels, py := lf.Wheels(), lf.Inputs.Python
	if len(wheels) == 0 || py == nil {
		return nil, 0, nil
	}
	if offline {
		return nil, len(wheels), nil
	}
	if len(py.Platforms) == 0 {
		return nil, 0, errdefs.Errorf(errdefs.Invalid, "lockfile: inputs.python has no platform")
	}
	target, err := pipeline.ParsePythonTarget(py.Version, py.Platforms[0])
	if err != nil {
		return nil, 0, errdefs.Errorf(errdefs.Invalid, "lockfile: inputs.python: %v", err)
	}
	cfg, err := pypi.LoadIndexConfig(ctx)
	if err != nil {
		return nil, 0, err
	}
	tmp, err := os.MkdirTemp("", "prebake-outdated-py-")
	if err != nil {
		return nil, 0, errdefs.New(errdefs.CantWrite, err)
	}
	defer os.RemoveAll(tmp)
	bc, err := blobcache.Open(tmp, false, nil)
	if err != nil {
		return nil, 0, err
	}
	cl, err := pypi.NewClient(cfg, pypi.WithUserAgent(userAgent), pypi.WithLogger(log))
	if err != nil {
		return nil, 0, err
	}
	r, err := pypi.NewResolver(cfg, bc, pypi.WithIndexClient(cl))
	if err != nil {
		return nil, 0, err
	}
	direct := map[string]bool{}
	for _, s := range py.Requirements {
		if q, err := pypi.ParseRequirement(s); err == nil {
			direct[pypi.CanonicalName(q.Name)] = true
		}
	}
	if !slices.ContainsFunc(wheels, func(w lock.Artifact) bool { return direct[w.Name] }) {
		direct = nil // a lock input (pylock.toml, uv.lock) names no package: every wheel
	}
	var out []Package
	for _, w := range wheels {
		if direct != nil && !direct[w.Name] {
			continue
		}
		cur, err := pypi.ParseVersion(w.Version)
		if err != nil {
			return nil, 0, errdefs.Errorf(errdefs.Invalid, "lockfile: wheel %s: %v", w.File, err)
		}
		vs, err := r.Versions(ctx, w.Name, target, cur.IsPrerelease())
		if err != nil {
			return nil, 0, err
		}
		p := Package{Module: "pypi/" + w.Name, Current: w.Version}
		for _, v := range vs {
			if v.Compare(cur) > 0 {
				p.Newer = append(p.Newer, v.String())
			}
		}
		if len(p.Newer) > 0 {
			p.Latest = p.Newer[len(p.Newer)-1]
		}
		out = append(out, p)
	}
	return out, 0, nil
}
