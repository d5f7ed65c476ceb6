package pypi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/prebake/prebake/internal/wheel"
)

// Versions lists, oldest first, the versions of project name that have a
// wheel the target can load (wheel.Target.Compatible), not yanked, whose
// requires-python admits the target, in the find-links and the indexes
// together; pre-releases only when pre is true. Only the pages are read:
// nothing is downloaded. A project no index has is errdefs.NotFound.
func (r *Resolver) Versions(ctx context.Context, name string, t Target, pre bool) ([]Version, error) {
	if _, err := t.Tags(); err != nil {
		return nil, err
	}
	cands, err := r.candidates(ctx, CanonicalName(name))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	full, _ := ParseVersion(t.fullVersion())
	seen := map[string]bool{}
	var out []Version
	for _, c := range cands {
		if c.Yanked || !strings.HasSuffix(c.Filename, ".whl") {
			continue
		}
		n, err := wheel.ParseFilename(c.Filename)
		if err != nil || n.Project() != CanonicalName(name) {
			continue
		}
		if _, ok := t.Compatible(n); !ok {
			continue
		}
		v, err := ParseVersion(n.Version)
		if err != nil || v.IsPrerelease() && !pre {
			continue
		}
		if !admitsPython(c.RequiresPython, full) {
			continue
		}
		if key := v.String(); !seen[key] {
			seen[key] = true
			out = append(out, v)
		}
	}
	slices.SortFunc(out, Version.Compare)
	return out, nil
}
