package pypi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

type uvLockFile struct {
	Version        int         `toml:"version"`
	Revision       int         `toml:"revision"`
	RequiresPython string      `toml:"requires-python"`
	Packages       []uvPackage `toml:"package"`
}

type uvPackage struct {
	Name                 string             `toml:"name"`
	Version              string             `toml:"version"`
	Source               map[string]any     `toml:"source"`
	Sdist                *uvDist            `toml:"sdist"`
	Wheels               []uvDist           `toml:"wheels"`
	Dependencies         []uvDep            `toml:"dependencies"`
	OptionalDependencies map[string][]uvDep `toml:"optional-dependencies"`
	ResolutionMarkers    []string           `toml:"resolution-markers"`
}

type uvDist struct {
	URL  string `toml:"url"`
	Path string `toml:"path"`
	Hash string `toml:"hash"`
	Size int64  `toml:"size"`
}

type uvDep struct {
	Name    string   `toml:"name"`
	Version string   `toml:"version"`
	Extra   []string `toml:"extra"`
	Marker  string   `toml:"marker"`
}

// ReadUvLock reads a uv.lock (uv's own TOML lock, version 1): its
// packages from a registry become Pinned, with their wheels (URL, file
// name, sha256), sdist, dependency edges (with markers) and resolution
// markers; a package with no wheel is flagged (Pin.SdistOnly). The
// project's own packages (virtual, editable or directory sources: its
// workspace) are not pins: their dependency edges are Input.Roots. A
// package from git, a URL or a path is refused: not lockable as wheels
// from an index.
func ReadUvLock(ctx context.Context, path string, opts ...ReadOption) (*Input, error) {
	o, err := makeReadOptions(opts)
	if err != nil {
		return nil, err
	}
	var lf uvLockFile
	f, err := decodeTOML(ctx, path, o, &lf)
	if err != nil {
		return nil, err
	}
	if lf.Version != 1 {
		return nil, lineErrorf(f.at(f.keyLine(1, "version")), "uv.lock version %d: only version 1 is read", lf.Version)
	}
	in := &Input{Format: FormatUvLock, File: path}
	if in.RequiresPython, err = f.requiresPython(1, lf.RequiresPython); err != nil {
		return nil, err
	}
	heads := f.headers("package")
	for i, p := range lf.Packages {
		line := nthLine(heads, i)
		src := f.at(line)
		if !nameRE.MatchString(p.Name) {
			return nil, lineErrorf(src, "package name %q is not a project name", p.Name)
		}
		name := CanonicalName(p.Name)
		fail := func(key, format string, args ...any) (*Input, error) {
			return nil, lineErrorf(f.at(f.keyLine(line, key)), "package %s: %w", name, fmt.Errorf(format, args...))
		}
		deps, err := uvDeps(p.Dependencies, "")
		if err != nil {
			return fail("dependencies", "%v", err)
		}
		for _, extra := range slices.Sorted(maps.Keys(p.OptionalDependencies)) {
			more, err := uvDeps(p.OptionalDependencies[extra], CanonicalName(extra))
			if err != nil {
				return fail("dependencies", "%v", err)
			}
			deps = append(deps, more...)
		}
		kind, where := uvSource(p.Source)
		switch kind {
		case "registry":
		case "virtual", "editable", "directory":
			in.Roots = append(in.Roots, deps...)
			continue
		case "":
			return fail("source", "no source")
		default:
			return fail("source", "from %s %s: %w", kind, noUserinfo(where), ErrNotWheel)
		}
		if _, err := ParseVersion(p.Version); err != nil {
			return fail("version", "%v", err)
		}
		pin := Pin{Name: name, Version: p.Version, Index: noUserinfo(where), Dependencies: deps,
			ResolutionMarkers: p.ResolutionMarkers, Origin: src}
		for _, m := range p.ResolutionMarkers {
			if _, err := ParseMarker(m); err != nil {
				return fail("resolution-markers", "%v", err)
			}
		}
		for _, w := range p.Wheels {
			wname := lockWheelName("", w.URL)
			wline := f.find(line, wname)
			if w.URL == "" {
				return nil, lineErrorf(f.at(wline), "package %s: a wheel with no url (by path: not fetched from an index)", name)
			}
			u, h, err := uvDistCheck(w)
			if err != nil {
				return nil, lineErrorf(f.at(wline), "package %s, wheel %s: %v", name, wname, err)
			}
			if !strings.HasSuffix(wname, ".whl") {
				return nil, lineErrorf(f.at(wline), "package %s: %q is not a wheel file name", name, wname)
			}
			pin.Wheels = append(pin.Wheels, PinnedWheel{Name: wname, URL: u, SHA256: h, Size: w.Size})
		}
		if p.Sdist != nil && p.Sdist.URL != "" {
			u, h, err := uvDistCheck(*p.Sdist)
			if err != nil {
				return fail("sdist", "sdist: %v", err)
			}
			pin.Sdist = &PinnedSdist{URL: u, SHA256: h, Size: p.Sdist.Size}
		}
		if len(pin.Wheels) == 0 && pin.Sdist == nil {
			return fail("name", "no wheel and no sdist")
		}
		in.Pinned = append(in.Pinned, pin)
	}
	return in, nil
}

// uvSource is the kind of a package's source table and its value.
func uvSource(s map[string]any) (kind, where string) {
	for _, k := range []string{"registry", "virtual", "editable", "directory", "git", "url", "path"} {
		if v, ok := s[k]; ok {
			w, _ := v.(string)
			return k, w
		}
	}
	for k := range s {
		return k, ""
	}
	return "", ""
}

func uvDeps(ds []uvDep, extra string) ([]PinDependency, error) {
	var out []PinDependency
	for _, d := range ds {
		if !nameRE.MatchString(d.Name) {
			return nil, fmt.Errorf("dependency name %q is not a project name", d.Name)
		}
		m, err := ParseMarker(d.Marker)
		if err != nil {
			return nil, fmt.Errorf("dependency %s: %w", d.Name, err)
		}
		pd := PinDependency{Name: CanonicalName(d.Name), Version: d.Version, Marker: m, Extra: extra}
		for _, e := range d.Extra {
			pd.Extras = append(pd.Extras, CanonicalName(e))
		}
		out = append(out, pd)
	}
	return out, nil
}

// uvDistCheck checks a wheel's or sdist's URL and "sha256:<hex>" hash.
func uvDistCheck(d uvDist) (u, sha string, err error) {
	if u, err = lockFileURL(d.URL); err != nil {
		return "", "", err
	}
	alg, h, _ := strings.Cut(d.Hash, ":")
	if alg != "sha256" {
		return "", "", fmt.Errorf("hash %q: want sha256:<hex>", d.Hash)
	}
	if sha, err = lockSHA256(h); err != nil {
		return "", "", err
	}
	return u, sha, nil
}
