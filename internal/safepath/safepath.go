// Package safepath keeps the paths and keys derived from untrusted names
// (coordinates from POMs, file names from locks, manifests and image
// annotations) under their roots: defence in depth behind the coordinate
// validator (maven.CheckPart).
package safepath

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrUnsafe is matched (errors.Is) by every name or path this package
// refuses.
var ErrUnsafe = errors.New("unsafe path")

// MaxName is the longest file name most file systems store (NAME_MAX).
const MaxName = 255

// Name checks that name is a bare file name: not empty, ".", or "..", at
// most MaxName bytes of valid UTF-8, without "/", "\", NUL or another
// control character.
func Name(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: an empty file name", ErrUnsafe)
	case name == "." || name == "..":
		return fmt.Errorf("%w: file name %q", ErrUnsafe, name)
	case len(name) > MaxName:
		return fmt.Errorf("%w: file name %s is longer than %d bytes", ErrUnsafe, quote(name), MaxName)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: file name %s is not valid UTF-8", ErrUnsafe, quote(name))
	}
	for _, r := range name {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return fmt.Errorf("%w: file name %s holds %q", ErrUnsafe, quote(name), r)
		}
	}
	return nil
}

// Rel checks a slash-separated path relative to some root: every
// non-empty segment is a Name (so none is "." or ".."). Empty segments
// (a leading, doubled or trailing "/") stay under the root and pass.
func Rel(rel string) error {
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" {
			continue
		}
		if err := Name(seg); err != nil {
			return fmt.Errorf("path %s: %w", quote(rel), err)
		}
	}
	return nil
}

// Join joins the slash-separated relative path rel to the local directory
// root, after checking it with Rel, and checks that the result is still
// under root (lexically).
func Join(root, rel string) (string, error) {
	if err := Rel(rel); err != nil {
		return "", err
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if !Within(root, p) {
		return "", fmt.Errorf("%w: %s is outside %s", ErrUnsafe, quote(p), root)
	}
	return p, nil
}

// Within reports whether the local path p is root or under it (lexically,
// after cleaning both).
func Within(root, p string) bool {
	r, err := filepath.Rel(filepath.Clean(root), filepath.Clean(p))
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// JoinSlash joins rel to the slash-separated prefix (a store key prefix,
// an image directory) after checking it with Rel. prefix may be "" or end
// with "/"; the result is prefix + rel, and it stays under the prefix
// once cleaned.
func JoinSlash(prefix, rel string) (string, error) {
	if err := Rel(rel); err != nil {
		return "", err
	}
	out := prefix + rel
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		out = prefix + "/" + rel
	}
	clean := path.Clean("/" + out)
	base := path.Clean("/" + prefix)
	if base != "/" && !strings.HasPrefix(clean, base+"/") {
		return "", fmt.Errorf("%w: %s is outside %s", ErrUnsafe, quote(out), prefix)
	}
	return out, nil
}

func quote(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q… (%d bytes)", s[:200], len(s))
	}
	return fmt.Sprintf("%q", s)
}
