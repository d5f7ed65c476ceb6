package pypi

import (
	"context"
	"fmt"
	"strings"
)

type pylockFile struct {
	LockVersion    string          `toml:"lock-version"`
	RequiresPython string          `toml:"requires-python"`
	CreatedBy      string          `toml:"created-by"`
	Packages       []pylockPackage `toml:"packages"`
}

type pylockPackage struct {
	Name           string         `toml:"name"`
	Version        string         `toml:"version"`
	Marker         string         `toml:"marker"`
	RequiresPython string         `toml:"requires-python"`
	Index          string         `toml:"index"`
	Wheels         []pylockDist   `toml:"wheels"`
	Sdist          *pylockDist    `toml:"sdist"`
	VCS            map[string]any `toml:"vcs"`
	Directory      map[string]any `toml:"directory"`
	Archive        map[string]any `toml:"archive"`
}

type pylockDist struct {
	Name   string            `toml:"name"`
	URL    string            `toml:"url"`
	Path   string            `toml:"path"`
	Size   int64             `toml:"size"`
	Hashes map[string]string `toml:"hashes"`
}

// ReadPylock reads a PEP 751 lock file (pylock.toml) of lock-version 1.x
// as it is: its packages become Pinned, each with its marker,
// requires-python and wheels (URL, file name, sha256); a package with an
// sdist and no wheel is kept and flagged (Pin.SdistOnly). A package from
// a VCS, a directory or an archive, a wheel by path and a wheel without a
// sha256 hash are refused: they cannot be fetched from an index and
// checked. Which wheel fits a target is chosen later.
func ReadPylock(ctx context.Context, path string, opts ...ReadOption) (*Input, error) {
	o, err := makeReadOptions(opts)
	if err != nil {
		return nil, err
	}
	var lf pylockFile
	f, err := decodeTOML(ctx, path, o, &lf)
	if err != nil {
		return nil, err
	}
	major, _, _ := strings.Cut(lf.LockVersion, ".")
	if major != "1" {
		return nil, lineErrorf(f.at(f.keyLine(1, "lock-version")), "lock-version %q: only PEP 751 lock-version 1.x is read", lf.LockVersion)
	}
	in := &Input{Format: FormatPylock, File: path}
	if in.RequiresPython, err = f.requiresPython(1, lf.RequiresPython); err != nil {
		return nil, err
	}
	heads := f.headers("packages")
	for i, p := range lf.Packages {
		pin, err := pylockPin(f, nthLine(heads, i), p)
		if err != nil {
			return nil, err
		}
		in.Pinned = append(in.Pinned, pin)
	}
	return in, nil
}

func pylockPin(f *tomlFile, line int, p pylockPackage) (Pin, error) {
	src := f.at(line)
	if !nameRE.MatchString(p.Name) {
		return Pin{}, lineErrorf(src, "package name %q is not a project name", p.Name)
	}
	pin := Pin{Name: CanonicalName(p.Name), Version: p.Version, Index: noUserinfo(p.Index), Origin: src}
	fail := func(key, format string, args ...any) (Pin, error) {
		return Pin{}, lineErrorf(f.at(f.keyLine(line, key)), "package %s: %w", pin.Name, fmt.Errorf(format, args...))
	}
	switch {
	case p.VCS != nil:
		return fail("vcs", "from a VCS: %w", ErrNotWheel)
	case p.Directory != nil:
		return fail("directory", "from a directory: %w", ErrNotWheel)
	case p.Archive != nil:
		return fail("archive", "from an archive: %w", ErrNotWheel)
	case p.Version == "":
		return fail("name", "no version")
	}
	if _, err := ParseVersion(p.Version); err != nil {
		return fail("version", "%v", err)
	}
	var err error
	if pin.Marker, err = ParseMarker(p.Marker); err != nil {
		return fail("marker", "%v", err)
	}
	if pin.RequiresPython, err = ParseSpecifiers(p.RequiresPython); err != nil {
		return fail("requires-python", "requires-python: %v", err)
	}
	for _, w := range p.Wheels {
		name := lockWheelName(w.Name, w.URL)
		wline := f.find(line, name)
		bad := func(format string, args ...any) (Pin, error) {
			return Pin{}, lineErrorf(f.at(wline), "package %s, wheel %s: %w", pin.Name, name, fmt.Errorf(format, args...))
		}
		if w.URL == "" {
			return bad("no url (a wheel by path is not fetched from an index)")
		}
		u, err := lockFileURL(w.URL)
		if err != nil {
			return bad("%v", err)
		}
		if !strings.HasSuffix(name, ".whl") {
			return bad("not a wheel file name")
		}
		if w.Hashes["sha256"] == "" {
			return bad("no sha256 hash")
		}
		h, err := lockSHA256(w.Hashes["sha256"])
		if err != nil {
			return bad("%v", err)
		}
		pin.Wheels = append(pin.Wheels, PinnedWheel{Name: name, URL: u, SHA256: h, Size: w.Size})
	}
	if s := p.Sdist; s != nil {
		d := &PinnedSdist{Size: s.Size}
		if s.URL != "" {
			if d.URL, err = lockFileURL(s.URL); err != nil {
				return fail("sdist", "sdist: %v", err)
			}
		}
		if s.Hashes["sha256"] != "" {
			if d.SHA256, err = lockSHA256(s.Hashes["sha256"]); err != nil {
				return fail("sdist", "sdist: %v", err)
			}
		}
		pin.Sdist = d
	}
	if len(pin.Wheels) == 0 && pin.Sdist == nil {
		return fail("name", "no wheel and no sdist")
	}
	return pin, nil
}
