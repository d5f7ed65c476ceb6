package pypi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

type pyprojectFile struct {
	Project *struct {
		Name                 string              `toml:"name"`
		RequiresPython       string              `toml:"requires-python"`
		Dependencies         []string            `toml:"dependencies"`
		OptionalDependencies map[string][]string `toml:"optional-dependencies"`
		Dynamic              []string            `toml:"dynamic"`
	} `toml:"project"`
}

// ReadPyproject reads a pyproject.toml's [project] dependencies (PEP 621)
// and, for the extras WithExtras names, its optional-dependencies (a
// dependency on the project itself, "name[extra]", adds that extra's).
// Dependencies a build backend computes (dynamic) are refused: they are
// not in the file.
func ReadPyproject(ctx context.Context, path string, opts ...ReadOption) (*Input, error) {
	o, err := makeReadOptions(opts)
	if err != nil {
		return nil, err
	}
	var pf pyprojectFile
	f, err := decodeTOML(ctx, path, o, &pf)
	if err != nil {
		return nil, err
	}
	p := pf.Project
	if p == nil {
		return nil, lineErrorf(f.at(0), "no [project] table (PEP 621)")
	}
	projLine := f.find(1, "[project]")
	self := CanonicalName(p.Name)
	in := &Input{Format: FormatPyproject, File: path}
	if in.RequiresPython, err = f.requiresPython(projLine, p.RequiresPython); err != nil {
		return nil, err
	}
	for _, d := range p.Dynamic {
		switch {
		case d == "dependencies":
			return nil, lineErrorf(f.at(f.keyLine(projLine, "dynamic")), "[project] dependencies are dynamic (computed by the build backend): list them in the file, or use a requirements file or a lock")
		case d == "optional-dependencies" && len(o.extras) > 0:
			return nil, lineErrorf(f.at(f.keyLine(projLine, "dynamic")), "[project] optional-dependencies are dynamic (computed by the build backend): extras %s cannot be read", strings.Join(o.extras, ", "))
		}
	}
	optional := map[string][]string{}
	for k, v := range p.OptionalDependencies {
		optional[CanonicalName(k)] = v
	}
	depsLine := f.keyLine(projLine, "dependencies")
	add := func(deps []string, from int) ([]string, error) {
		var more []string
		for _, d := range deps {
			src := f.at(f.find(from, tomlQuoted(d)...))
			if looksLikeLocation(d) {
				return nil, lineError(src, fmt.Errorf("%q is a URL or path requirement: %w", redact.String(d), ErrNotWheel))
			}
			r, err := ParseRequirement(d)
			if err != nil {
				return nil, lineError(src, err)
			}
			r.Origin = src
			if self != "" && r.Name == self {
				more = append(more, r.Extras...)
				continue
			}
			in.Requirements = append(in.Requirements, r)
		}
		return more, nil
	}
	queue, err := add(p.Dependencies, depsLine)
	if err != nil {
		return nil, err
	}
	for _, e := range o.extras {
		e = CanonicalName(e)
		if _, ok := optional[e]; !ok {
			return nil, errdefs.Optionf(errdefs.BadArgument, "pypi.WithExtras", "%s declares no extra %q (it declares: %s)",
				path, e, strings.Join(slices.Sorted(maps.Keys(optional)), ", "))
		}
		queue = append(queue, e)
	}
	done := map[string]bool{}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if done[e] {
			continue
		}
		done[e] = true
		deps, ok := optional[e]
		if !ok {
			return nil, lineErrorf(f.at(depsLine), "%s[%s]: the project declares no extra %q", self, e, e)
		}
		more, err := add(deps, f.find(projLine, "[project.optional-dependencies]"))
		if err != nil {
			return nil, err
		}
		queue = append(queue, more...)
	}
	return in, nil
}
