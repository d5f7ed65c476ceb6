package wheel

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
)

// The ways a wheel is refused, each wrapped in an errdefs.Invalid error
// that names the wheel and the member; a member path that would leave root
// (or a link, a device) wraps safepath.ErrUnsafe.
var (
	ErrFormat    = errors.New("not a valid wheel")
	ErrRecord    = errors.New("RECORD does not match the wheel")
	ErrTooLarge  = errors.New("too large")
	ErrDuplicate = errors.New("duplicate entry")
)

// Installed says what Install wrote.
type Installed struct {
	Name     Name
	Root     string
	DistInfo string   // "six-1.16.0.dist-info"
	Purelib  bool     // WHEEL's Root-Is-Purelib
	Files    []File   // every file written, sorted by Path, INSTALLER and RECORD included
	Skipped  []string // members verified but not installed, sorted
	Size     int64    // bytes written
}

// File is one installed file.
type File struct {
	Path   string      // relative to root, slash-separated
	Size   int64       //
	Mode   fs.FileMode // 0644, or 0755 when executable
	SHA256 [sha256.Size]byte
}

// maxPath bounds a member's path (PATH_MAX is 4096 with root's own).
const maxPath = 1024

// metadataMax bounds the WHEEL and RECORD files, read into memory.
const metadataMax = 64 << 20

// InstallFile installs the wheel at path into root (see Install). A missing
// file is errdefs.NotFound; a FIFO, a device or a directory errdefs.Invalid,
// refused before it is opened.
func InstallFile(ctx context.Context, wheelPath, root string, opts ...Option) (*Installed, error) {
	f, size, err := openRegular(wheelPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Install(ctx, f, size, filepath.Base(wheelPath), root, opts...)
}

// openRegular opens the regular file at path; what is not one is refused
// before the open (a FIFO would block it) and after.
func openRegular(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, errdefs.New(errdefs.NotFound, err)
	}
	if err != nil {
		return nil, 0, errdefs.New(errdefs.Invalid, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errdefs.Errorf(errdefs.Invalid, "wheel %s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err == nil {
		fi, err = f.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("wheel %s: not a regular file", path)
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, 0, errdefs.New(errdefs.Invalid, err)
	}
	return f, fi.Size(), nil
}

// Install installs the wheel r (size bytes, named file: its distribution,
// version and tags come from the name) into root, a site-packages directory
// that must not exist or be empty (see the package comment for the rules).
// Nothing is written to root unless the whole wheel installs: the files are
// written to a temporary directory beside root, renamed into place at the
// end.
func Install(ctx context.Context, r io.ReaderAt, size int64, file, root string, opts ...Option) (*Installed, error) {
	o, name, p, err := openWheel(r, size, file, opts)
	if err != nil {
		return nil, err
	}
	if err := checkRoot(root); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(root), "."+filepath.Base(root)+".tmp-*")
	if err != nil {
		return nil, errdefs.New(errdefs.CantWrite, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	in := &Installed{Name: name, Root: root, DistInfo: p.distInfo, Purelib: p.purelib, Skipped: p.skipped}
	w := &writer{ctx: ctx, wheel: file, dir: tmp, o: o, buf: make([]byte, 256<<10), dirs: map[string]bool{}}
	for _, m := range p.members {
		f, err := w.member(m)
		if err != nil {
			return nil, err
		}
		if m.target != "" {
			in.Files = append(in.Files, f)
		}
	}
	byPath := func(a, b File) int { return strings.Compare(a.Path, b.Path) }
	in.Files = append(in.Files, w.bytes(p.distInfo+"/INSTALLER", []byte("prebake\n")))
	slices.SortFunc(in.Files, byPath)
	in.Files = append(in.Files, w.bytes(p.distInfo+"/RECORD", writeRecord(in.Files, p.distInfo+"/RECORD")))
	slices.SortFunc(in.Files, byPath)
	if w.err == nil {
		w.err = w.finish()
	}
	if w.err != nil {
		return nil, w.err
	}
	for _, f := range in.Files {
		in.Size += f.Size
	}
	// root is absent or an empty directory (checkRoot): os.Rename does
	// not replace a directory, os.Remove removes only an empty one.
	if err := os.Remove(root); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("wheel %s: %w", file, err))
	}
	if err := os.Rename(tmp, root); err != nil {
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("wheel %s: %w", file, err))
	}
	return in, nil
}

// checkRoot refuses a root that exists and is not an empty directory.
func checkRoot(root string) error {
	if root == "" {
		return errdefs.Errorf(errdefs.BadArgument, "no install root")
	}
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
			return errdefs.New(errdefs.CantWrite, err)
		}
		return nil
	case err != nil:
		return errdefs.New(errdefs.CantWrite, err)
	case !fi.IsDir():
		return errdefs.Errorf(errdefs.BadArgument, "install root %s is not a directory", root)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return errdefs.New(errdefs.CantWrite, err)
	}
	if len(entries) > 0 {
		return errdefs.Errorf(errdefs.BadArgument, "install root %s is not empty", root)
	}
	return nil
}

// A member is a file of the wheel and where it goes.
type member struct {
	f      *zip.File
	target string // under root; "" to verify only
	mode   fs.FileMode
	script bool // a .data/scripts file: its #!python line is rewritten
	row    recordRow
}

// layout is a checked wheel: its members in target order.
type layout struct {
	distInfo string
	purelib  bool
	members  []member
	skipped  []string
}

// openWheel is what Install and Plan do first: their options, the wheel's
// name (from file) and its checked layout (plan) of the zip r, size bytes.
func openWheel(r io.ReaderAt, size int64, file string, opts []Option) (*options, Name, *layout, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, Name{}, nil, err
	}
	name, err := ParseFilename(file)
	if err != nil {
		return nil, Name{}, nil, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, Name{}, nil, errdefs.Errorf(errdefs.Invalid, "wheel %s: %w: %w", file, ErrFormat, err)
	}
	useInflater(zr)
	p, err := plan(zr, name, o)
	if err != nil {
		return nil, Name{}, nil, err
	}
	return o, name, p, nil
}

// plan checks every member of zr (paths, types, sizes, RECORD, WHEEL) and
// places it, before anything is written.
func plan(zr *zip.Reader, n Name, o *options) (*layout, error) {
	fail := func(name string, err error) error {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("wheel %s: %.200q: %w", n.File, name, err))
	}
	files, err := checkMembers(zr, o, fail)
	if err != nil {
		return nil, err
	}
	p := &layout{}
	for _, f := range files {
		top, _, _ := strings.Cut(f.Name, "/")
		if strings.HasSuffix(top, ".dist-info") && top != p.distInfo {
			if p.distInfo != "" {
				return nil, fail(f.Name, fmt.Errorf("%w: a second .dist-info directory besides %s", ErrFormat, p.distInfo))
			}
			p.distInfo = top
		}
	}
	if p.distInfo == "" {
		return nil, errdefs.Errorf(errdefs.Invalid, "wheel %s: %w: no .dist-info directory", n.File, ErrFormat)
	}
	if dist, _, _ := strings.Cut(p.distInfo, "-"); NormalizeProject(dist) != n.Project() {
		return nil, fail(p.distInfo, fmt.Errorf("%w: not the dist-info of %s", ErrFormat, n.Project()))
	}
	recordName := p.distInfo + "/RECORD"
	record, err := readMember(files, recordName)
	if err != nil {
		return nil, fail(recordName, err)
	}
	rows, err := parseRecord(record, p.distInfo)
	if err != nil {
		return nil, fail(recordName, err)
	}
	wheelName := p.distInfo + "/WHEEL"
	meta, err := readMember(files, wheelName)
	if err == nil {
		p.purelib, err = parseWheel(meta)
	}
	if err != nil {
		return nil, fail(wheelName, err)
	}

	data := strings.TrimSuffix(p.distInfo, ".dist-info") + ".data/"
	targets := map[string]string{} // lower-case target → member
	for _, t := range []string{recordName, p.distInfo + "/INSTALLER"} {
		targets[strings.ToLower(t)] = "prebake's " + t
	}
	for _, f := range files {
		row, ok := rows[f.Name]
		top, rest, _ := strings.Cut(f.Name, "/")
		if !ok && !(top == p.distInfo && unhashed(rest)) {
			return nil, fail(f.Name, fmt.Errorf("%w: not listed in RECORD", ErrRecord))
		}
		delete(rows, f.Name)
		m := member{f: f, target: f.Name, mode: 0o644, row: row}
		if f.Mode()&0o111 != 0 {
			m.mode = 0o755
		}
		if top == p.distInfo && (unhashed(rest) || rest == "INSTALLER") {
			m.target = "" // rewritten
		} else if rest, ok := strings.CutPrefix(f.Name, data); ok {
			scheme, rel, _ := strings.Cut(rest, "/")
			switch {
			case rel == "":
				return nil, fail(f.Name, fmt.Errorf("%w: a file of %s outside its purelib, platlib, scripts, data and headers", ErrFormat, data))
			case scheme == "purelib" || scheme == "platlib":
				m.target = rel
			case scheme == "scripts" && o.scriptsDir != "":
				m.target, m.mode, m.script = path.Join(o.scriptsDir, rel), 0o755, true
			case scheme == "data" && o.dataDir != "":
				m.target = path.Join(o.dataDir, rel)
			case scheme == "scripts" || scheme == "data" || scheme == "headers":
				m.target = ""
				p.skipped = append(p.skipped, f.Name)
			default:
				return nil, fail(f.Name, fmt.Errorf("%w: unknown scheme %.40q in %s", ErrFormat, scheme, data))
			}
		}
		if m.target != "" {
			key := strings.ToLower(m.target)
			if prev, dup := targets[key]; dup {
				return nil, fail(f.Name, fmt.Errorf("%w: installs to %.200q, as %.200q does", ErrDuplicate, m.target, prev))
			}
			targets[key] = f.Name
		}
		p.members = append(p.members, m)
	}
	if len(rows) > 0 {
		missing := slices.Sorted(maps.Keys(rows))
		return nil, fail(recordName, fmt.Errorf("%w: it lists %.200q, which the wheel does not hold", ErrRecord, missing[0]))
	}
	// A file may not also be a directory of another.
	for _, key := range slices.Sorted(maps.Keys(targets)) {
		for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
			if other, clash := targets[dir]; clash {
				return nil, fail(targets[key], fmt.Errorf("%w: %.200q installs a file where it needs a directory", ErrDuplicate, other))
			}
		}
	}
	slices.SortFunc(p.members, func(a, b member) int {
		return strings.Compare(a.target+"\x00"+a.f.Name, b.target+"\x00"+b.f.Name)
	})
	slices.Sort(p.skipped)
	return p, nil
}

// checkMembers checks every entry's path, type and sizes (before any is
// read) and returns the files, directories left out.
func checkMembers(zr *zip.Reader, o *options, fail func(string, error) error) ([]*zip.File, error) {
	if len(zr.File) > o.maxFiles {
		return nil, fail(zr.File[o.maxFiles].Name, fmt.Errorf("%w: more than %d members", ErrTooLarge, o.maxFiles))
	}
	var files []*zip.File
	seen := map[string]string{} // lower-case name → name
	var total uint64
	for _, f := range zr.File {
		dir := strings.HasSuffix(f.Name, "/")
		if err := checkMember(strings.TrimSuffix(f.Name, "/")); err != nil {
			return nil, fail(f.Name, err)
		}
		if err := checkType(f.Mode(), dir); err != nil {
			return nil, fail(f.Name, err)
		}
		if prev, dup := seen[strings.ToLower(f.Name)]; dup {
			return nil, fail(f.Name, fmt.Errorf("%w: the wheel holds %.200q too", ErrDuplicate, prev))
		}
		seen[strings.ToLower(f.Name)] = f.Name
		if total += f.UncompressedSize64; total > uint64(o.maxSize) {
			return nil, fail(f.Name, fmt.Errorf("%w: more than %d bytes uncompressed", ErrTooLarge, o.maxSize))
		}
		if f.UncompressedSize64 > ratioFloor && f.UncompressedSize64/max(f.CompressedSize64, 1) > uint64(o.maxRatio) {
			return nil, fail(f.Name, fmt.Errorf("%w: %d bytes compressed to %d, more than %d:1", ErrTooLarge, f.UncompressedSize64, f.CompressedSize64, o.maxRatio))
		}
		if !dir {
			files = append(files, f)
		}
	}
	return files, nil
}

// checkMember refuses a member path that could leave root: absolute, a
// backslash, an empty, "." or ".." segment, a control character, invalid
// UTF-8; or that the file system could refuse: longer than maxPath.
func checkMember(name string) error {
	if strings.HasPrefix(name, "/") {
		return fmt.Errorf("%w: an absolute path", safepath.ErrUnsafe)
	}
	if len(name) > maxPath {
		return fmt.Errorf("%w: a path longer than %d bytes", safepath.ErrUnsafe, maxPath)
	}
	for _, seg := range strings.Split(name, "/") {
		if err := safepath.Name(seg); err != nil {
			return err
		}
	}
	return nil
}

// checkType refuses an entry that is neither a regular file nor a
// directory (named with a trailing "/").
func checkType(mode fs.FileMode, dir bool) error {
	what := ""
	switch t := mode.Type() &^ fs.ModeDir; {
	case t&fs.ModeSymlink != 0:
		what = "a symbolic link"
	case t&fs.ModeDevice != 0:
		what = "a device"
	case t&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case t != 0:
		what = fmt.Sprintf("an entry of mode %v", mode)
	case mode.IsDir() != dir:
		what = "a directory without a trailing /"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s, not a regular file", safepath.ErrUnsafe, what)
}

// readMember reads the member named name into memory (at most metadataMax
// bytes; its hash is checked when it is installed).
func readMember(files []*zip.File, name string) ([]byte, error) {
	i := slices.IndexFunc(files, func(f *zip.File) bool { return f.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("%w: missing", ErrFormat)
	}
	if files[i].UncompressedSize64 > metadataMax {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, metadataMax)
	}
	rc, err := files[i].Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, metadataMax))
}

// parseWheel reads WHEEL (email-header style): Wheel-Version must be 1.x;
// it returns Root-Is-Purelib.
func parseWheel(data []byte) (purelib bool, err error) {
	version := ""
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch v = strings.TrimSpace(v); strings.TrimSpace(k) {
		case "Wheel-Version":
			version = v
		case "Root-Is-Purelib":
			purelib = strings.EqualFold(v, "true")
		}
	}
	if major, _, _ := strings.Cut(version, "."); major != "1" {
		return false, fmt.Errorf("%w: Wheel-Version %.40q, want 1.x", ErrFormat, version)
	}
	return purelib, nil
}

// writer writes the members into dir, verifying each against RECORD. Its
// first failure sticks (err).
type writer struct {
	ctx   context.Context
	wheel string
	dir   string
	o     *options
	buf   []byte
	dirs  map[string]bool // the directories made, by slash path
	err   error
}

func (w *writer) fail(m member, err error) (File, error) {
	if w.err == nil {
		w.err = errdefs.New(errdefs.Invalid, fmt.Errorf("wheel %s: %.200q: %w", w.wheel, m.f.Name, err))
	}
	return File{}, w.err
}

func (w *writer) cantWrite(name string, err error) error {
	if w.err == nil {
		w.err = errdefs.New(errdefs.CantWrite, fmt.Errorf("wheel %s: writing %s: %w", w.wheel, name, err))
	}
	return w.err
}

// member verifies m and, when it has a target, writes it.
func (w *writer) member(m member) (File, error) {
	if err := w.ctx.Err(); err != nil {
		return File{}, err
	}
	rc, err := m.f.Open()
	if err != nil {
		return w.fail(m, err)
	}
	defer rc.Close()
	verify := sha256.New()
	if m.row.algo != "" {
		verify = hashes[m.row.algo]()
	}
	src := io.Reader(io.TeeReader(ctxReader{w.ctx, rc}, verify))
	out := &trackWriter{w: io.Discard}
	var file *os.File
	if m.target != "" {
		if file, err = w.create(m.target); err != nil {
			return File{}, err
		}
		defer file.Close()
		out.w = file
	}
	// A script's "#!python" line names the target's interpreter.
	var head []byte
	if m.script && w.o.python != "" {
		br := bufio.NewReader(src)
		if b, _ := br.Peek(8); string(b) == "#!python" {
			if _, err := br.ReadString('\n'); err != nil && err != io.EOF {
				return w.fail(m, err)
			}
			head = []byte("#!" + w.o.python + "\n")
		}
		src = br
	}
	// The installed sha256 is the verified one, unless RECORD uses another
	// hash or the content changes.
	installed := verify
	if m.row.algo != "sha256" || head != nil {
		installed = sha256.New()
		out.w = io.MultiWriter(out.w, installed)
	}
	out.Write(head) //nolint:errcheck // out keeps its error
	n, err := io.CopyBuffer(out, src, w.buf)
	switch {
	case out.err != nil:
		return File{}, w.cantWrite(m.target, out.err)
	case err != nil && w.ctx.Err() != nil:
		return File{}, w.ctx.Err()
	case err != nil:
		return w.fail(m, err)
	case m.row.algo == "":
		// RECORD and its signatures: not hashed.
	case !bytes.Equal(verify.Sum(nil), m.row.sum):
		return w.fail(m, fmt.Errorf("%w: its %s is not RECORD's", ErrRecord, m.row.algo))
	case m.row.size >= 0 && int64(m.f.UncompressedSize64) != m.row.size:
		return w.fail(m, fmt.Errorf("%w: %d bytes, RECORD says %d", ErrRecord, m.f.UncompressedSize64, m.row.size))
	}
	if file == nil {
		return File{}, nil
	}
	f := File{Path: m.target, Size: int64(len(head)) + n, Mode: m.mode}
	copy(f.SHA256[:], installed.Sum(nil))
	return f, w.close(file, m.mode)
}

// trackWriter keeps the first error of its writer (a write error is
// errdefs.CantWrite, a read error the wheel's).
type trackWriter struct {
	w   io.Writer
	err error
}

func (t *trackWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil && t.err == nil {
		t.err = err
	}
	return n, err
}

// bytes writes a file the installer makes (INSTALLER, RECORD).
func (w *writer) bytes(name string, data []byte) File {
	f := File{Path: name, Size: int64(len(data)), Mode: 0o644, SHA256: sha256.Sum256(data)}
	if w.err != nil {
		return f
	}
	file, err := w.create(name)
	if err != nil {
		return f
	}
	defer file.Close()
	if _, err := file.Write(data); err != nil {
		w.cantWrite(name, err)
		return f
	}
	w.close(file, 0o644)
	return f
}

// create creates the file at the slash path name under dir, and its
// directories.
func (w *writer) create(name string) (*os.File, error) {
	p := filepath.Join(w.dir, filepath.FromSlash(name))
	for d := path.Dir(name); d != "." && !w.dirs[d]; d = path.Dir(d) {
		w.dirs[d] = true
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, w.cantWrite(name, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, w.cantWrite(name, err)
	}
	return f, nil
}

// close sets the file's mode and closes it, then sets its mtime.
func (w *writer) close(f *os.File, mode fs.FileMode) error {
	err := f.Chmod(mode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(f.Name(), w.o.epoch, w.o.epoch)
	}
	if err != nil {
		return w.cantWrite(f.Name(), err)
	}
	return nil
}

// finish sets the mode and mtime of every directory, root included.
func (w *writer) finish() error {
	w.dirs["."] = true
	for d := range w.dirs {
		p := filepath.Join(w.dir, filepath.FromSlash(d))
		if err := os.Chmod(p, 0o755); err != nil {
			return w.cantWrite(d, err)
		}
		if err := os.Chtimes(p, w.o.epoch, w.o.epoch); err != nil {
			return w.cantWrite(d, err)
		}
	}
	return nil
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
