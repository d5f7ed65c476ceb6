package layers

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/prebake/prebake/errdefs"
)

// ErrNoPython is matched (errors.Is) by the error of InspectPython for an
// image without python3 on its PATH directories (/usr/local/bin, /usr/bin,
// /bin).
var ErrNoPython = errors.New("no python3 in /usr/local/bin, /usr/bin or /bin")

// ImagePython is the Python an image runs, as its config and layers say:
// what a job's wheels are chosen for.
type ImagePython struct {
	// Ref is the image read, by digest.
	Ref string `json:"ref"`
	// Interpreter is the python3 found ("/usr/bin/python3").
	Interpreter string `json:"interpreter"`
	// Version is python3's major.minor ("3.11").
	Version string `json:"version"`
	// Machine is the image's architecture in Python's spelling (x86_64,
	// aarch64, ppc64le, s390x, i686, armv7l).
	Machine string `json:"machine"`
	// Glibc is the glibc version ("2.36"); Musl the musl one ("1.2").
	// Neither: no C library was found.
	Glibc string `json:"glibc,omitempty"`
	Musl  string `json:"musl,omitempty"`
}

// Bounds of the read of an image's layers for its Python: the link chain
// of python3 followed, and the bytes of libc.so.6 searched for its version.
const (
	maxPythonLinks = 8
	maxLibcRead    = 16 << 20
)

// InspectPython reads the Python of the image refStr names (a registry
// reference or oci:PATH): python3's major.minor from the link chain of
// python3 in /usr/local/bin, /usr/bin or /bin (python3 -> python3.11), or
// from a python3.N beside it or a lib/python3.N directory; the machine
// from the image config; the C library from lib*/…/libc.so.6 (its link
// target libc-2.31.so, else the "GNU C Library … version 2.36" string in
// it, read up to 16 MiB) or ld-musl-*.so.1 (musl 1.2). Only the files
// named are read from the layers (the top layer wins, whiteouts and
// opaque directories honoured); each layer's findings are cached by digest
// under WithCacheDir. For an index, the linux/amd64 image is read, else
// the first Linux one.
//
// An image without python3 is errdefs.BadArgument matching ErrNoPython;
// one without a C library found, errdefs.BadArgument; a missing image
// errdefs.NotFound.
func InspectPython(ctx context.Context, refStr string, opts ...Option) (*ImagePython, error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	r, err := parseRef(refStr)
	if err != nil {
		return nil, err
	}
	o.scopeAuth(r)
	b, err := loadBase(ctx, r, o)
	if err != nil {
		return nil, err
	}
	img, d, err := pythonImage(b, refStr)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, registryError(err, "reading the config of "+refStr)
	}
	ls, err := img.Layers()
	if err != nil {
		return nil, registryError(err, "reading the layers of "+refStr)
	}
	fs := pyFS{}
	for _, l := range ls {
		lp, err := processPyIndex.get(ctx, l, o.cacheDir)
		if err != nil {
			return nil, registryError(err, "reading "+refStr)
		}
		fs.apply(lp)
	}
	ip := &ImagePython{Ref: r.digestRef(d), Machine: pythonMachine(cf.Architecture, cf.Variant)}
	ip.Interpreter, ip.Version = fs.python()
	if ip.Version == "" {
		return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("image %s: %w", refStr, ErrNoPython))
	}
	ip.Glibc, ip.Musl = fs.libc(ip.Machine)
	if ip.Glibc == "" && ip.Musl == "" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "image %s: python3 %s but no C library found (no libc.so.6 with a version, no ld-musl-*.so.1 under /lib, /usr/lib, /lib64, /usr/lib64)", refStr, ip.Version)
	}
	if ip.Machine == "" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "image %s: its config names no architecture", refStr)
	}
	return ip, nil
}

// pythonImage is the image of b whose Python is read, and its digest.
func pythonImage(b *base, name string) (v1.Image, v1.Hash, error) {
	if b.img != nil {
		return b.img, b.desc.Digest, nil
	}
	im, err := b.idx.IndexManifest()
	if err != nil {
		return nil, v1.Hash{}, registryError(err, "reading index "+name)
	}
	var pick *v1.Descriptor
	for i, d := range im.Manifests {
		if isIndex(d.MediaType) || d.Platform == nil || d.Platform.OS != "linux" {
			continue // nested indexes, attestations
		}
		if pick == nil || (d.Platform.Architecture == "amd64" && pick.Platform.Architecture != "amd64") {
			pick = &im.Manifests[i]
		}
	}
	if pick == nil {
		return nil, v1.Hash{}, errdefs.Errorf(errdefs.NotFound, "index %s has no linux image", name)
	}
	img, err := b.idx.Image(pick.Digest)
	if err != nil {
		return nil, v1.Hash{}, registryError(err, "reading image "+name+"@"+pick.Digest.String())
	}
	return img, pick.Digest, nil
}

// pythonMachine is a Go architecture (an image config's) in Python's
// spelling (platform.machine()); "" when there is none.
func pythonMachine(arch, variant string) string {
	switch arch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "i686"
	case "arm":
		if variant == "v6" {
			return "armv6l"
		}
		return "armv7l"
	}
	return arch // ppc64le, s390x, riscv64: the same
}

// pyEntry is a file of interest of a layer: a python3 link or binary, a
// python3.N library directory, a C library.
type pyEntry struct {
	Path  string `json:"path"`
	Type  byte   `json:"type"`
	Link  string `json:"link,omitempty"`
	Glibc string `json:"glibc,omitempty"` // the version a libc.so.6's bytes name
}

// layerPython is what one layer does to the files of interest.
type layerPython struct {
	Entries   []pyEntry `json:"entries"`
	Whiteouts []string  `json:"whiteouts"`
	Opaque    []string  `json:"opaque"`
}

var (
	pyBinRE     = regexp.MustCompile(`^/(usr/local/bin|usr/bin|bin)/python3(\.[0-9]{1,3})?$`)
	pyLibDirRE  = regexp.MustCompile(`^/usr(/local)?/lib/python3\.[0-9]{1,3}(/|$)`)
	libDirRE    = regexp.MustCompile(`^/(usr/)?lib(64)?(/[^/]+)?/(libc\.so\.6|libc-[0-9]+\.[0-9]+\.so|ld-musl-[^/]+\.so\.1)$`)
	glibcFileRE = regexp.MustCompile(`^libc-([0-9]+)\.([0-9]+)\.so$`)
	glibcStrRE  = regexp.MustCompile(`GNU C Library [^\x00\n]{0,200}?version ([0-9]+)\.([0-9]+)`)
	pyVerRE     = regexp.MustCompile(`^python3\.([0-9]{1,3})$`)
)

// scanPythonLayer streams l's tar for the files of interest; a regular
// libc.so.6 is read (bounded) for its version.
func scanPythonLayer(ctx context.Context, l v1.Layer) (*layerPython, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	lp := &layerPython{Entries: []pyEntry{}, Whiteouts: []string{}, Opaque: []string{}}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return lp, nil
		}
		if err != nil {
			return nil, err
		}
		p := path.Clean("/" + h.Name)
		base := path.Base(p)
		del, opaque, isWhiteout := whiteout(p)
		switch {
		case isWhiteout && opaque:
			lp.Opaque = append(lp.Opaque, del)
		case isWhiteout:
			lp.Whiteouts = append(lp.Whiteouts, del)
		case pyBinRE.MatchString(p):
			lp.Entries = append(lp.Entries, pyEntry{Path: p, Type: h.Typeflag, Link: h.Linkname})
		case pyLibDirRE.MatchString(p):
			// The directory itself (entries under it stand for it).
			d := pyLibDirRE.FindString(p)
			lp.Entries = append(lp.Entries, pyEntry{Path: strings.TrimSuffix(d, "/"), Type: tar.TypeDir})
		case libDirRE.MatchString(p):
			e := pyEntry{Path: p, Type: h.Typeflag, Link: h.Linkname}
			if base == "libc.so.6" && h.Typeflag == tar.TypeReg {
				if e.Glibc, err = glibcOfBytes(tr); err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
			}
			lp.Entries = append(lp.Entries, e)
		}
	}
}

// glibcOfBytes finds the "GNU C Library … version X.Y" string in the
// first maxLibcRead bytes of r; "" when absent.
func glibcOfBytes(r io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxLibcRead))
	if err != nil {
		return "", err
	}
	i := bytes.Index(data, []byte("GNU C Library "))
	for i >= 0 {
		if m := glibcStrRE.FindSubmatch(data[i:min(len(data), i+300)]); m != nil {
			return string(m[1]) + "." + string(m[2]), nil
		}
		j := bytes.Index(data[i+1:], []byte("GNU C Library "))
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return "", nil
}

// pyIndex caches layer findings by layer digest, in memory and under
// dir/python-index, so each base layer is read once.
type pyIndex struct {
	mu  sync.Mutex
	mem map[string]*layerPython
}

var processPyIndex = &pyIndex{mem: map[string]*layerPython{}}

func (x *pyIndex) get(ctx context.Context, l v1.Layer, dir string) (*layerPython, error) {
	return cachedScan(ctx, &x.mu, x.mem, l, dir, "python-index", scanPythonLayer, nil)
}

// pyFS is the files of interest of an image, its layers applied in order.
type pyFS map[string]pyEntry

func (fs pyFS) apply(lp *layerPython) {
	applyWhiteouts(fs, lp.Opaque, lp.Whiteouts)
	for _, e := range lp.Entries {
		fs[e.Path] = e
	}
}

// resolve follows p's symbolic links (at most maxPythonLinks, each kept
// to the image's root) and returns the entry reached; ok is false when
// the chain ends at no entry of interest or is too long.
func (fs pyFS) resolve(p string) (pyEntry, bool) {
	for range maxPythonLinks {
		e, ok := fs[p]
		if !ok {
			// The usrmerge links (/bin -> usr/bin, /lib -> usr/lib).
			for _, m := range []string{"/bin/", "/lib/", "/lib64/"} {
				if strings.HasPrefix(p, m) {
					e, ok = fs["/usr"+p]
					break
				}
			}
			if !ok {
				return pyEntry{}, false
			}
		}
		if e.Type != tar.TypeSymlink {
			return e, true
		}
		if path.IsAbs(e.Link) {
			p = path.Clean(e.Link)
		} else {
			p = path.Join(path.Dir(e.Path), e.Link)
		}
	}
	return pyEntry{}, false
}

// python is the first python3 of the PATH directories and its
// major.minor: the name its links lead to (python3.11), else the highest
// python3.N beside it, else the highest lib/python3.N of its prefix.
func (fs pyFS) python() (interpreter, version string) {
	for _, prefix := range []string{"/usr/local", "/usr", ""} {
		p := prefix + "/bin/python3"
		if _, ok := fs[p]; !ok {
			continue
		}
		e, ok := fs.resolve(p)
		if !ok {
			continue
		}
		if m := pyVerRE.FindStringSubmatch(path.Base(e.Path)); m != nil {
			return p, "3." + m[1]
		}
		if v := fs.highest(path.Dir(e.Path)+"/python3.", func(e pyEntry) bool { return e.Type != tar.TypeDir }); v != "" {
			return p, v
		}
		lib := prefix
		if lib == "" {
			lib = "/usr"
		}
		if v := fs.highest(lib+"/lib/python3.", func(e pyEntry) bool { return e.Type == tar.TypeDir }); v != "" {
			return p, v
		}
	}
	return "", ""
}

// highest is the highest 3.N of the entries named prefix+N that keep.
func (fs pyFS) highest(prefix string, keep func(pyEntry) bool) string {
	best := -1
	for p, e := range fs {
		if rest, ok := strings.CutPrefix(p, prefix); ok && keep(e) {
			if n, err := strconv.Atoi(rest); err == nil && n > best && n < 1000 {
				best = n
			}
		}
	}
	if best < 0 {
		return ""
	}
	return "3." + strconv.Itoa(best)
}

// libc is the image's C library: glibc's version from libc.so.6 (its
// link's target libc-X.Y.so, else its bytes), else musl 1.2 for an
// ld-musl-*.so.1. Of several, the one whose directory names machine wins.
func (fs pyFS) libc(machine string) (glibc, musl string) {
	var paths []string
	for p := range fs {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int {
		am, bm := strings.Contains(a, machine), strings.Contains(b, machine)
		switch {
		case am && !bm:
			return -1
		case bm && !am:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, p := range paths {
		if path.Base(p) != "libc.so.6" {
			continue
		}
		if e, ok := fs[p]; ok && e.Type == tar.TypeSymlink {
			if m := glibcFileRE.FindStringSubmatch(path.Base(e.Link)); m != nil {
				return m[1] + "." + m[2], ""
			}
		}
		if e, ok := fs.resolve(p); ok && e.Glibc != "" {
			return e.Glibc, ""
		}
	}
	for _, p := range paths {
		if m := glibcFileRE.FindStringSubmatch(path.Base(p)); m != nil {
			return m[1] + "." + m[2], ""
		}
	}
	for _, p := range paths {
		if strings.HasPrefix(path.Base(p), "ld-musl-") {
			return "", "1.2"
		}
	}
	return "", ""
}
