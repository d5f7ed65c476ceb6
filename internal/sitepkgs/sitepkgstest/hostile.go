package sitepkgstest

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/internal/wheel"
)

// Hostile is a wheel that wheel.Check and wheel.Install refuse for one
// reason.
type Hostile struct {
	Case string // what is wrong, e.g. "RECORD hash mismatch"
	Data []byte
	// Want is what errors.Is finds in the refusal (always errdefs.Invalid).
	Want error
	// Says is a part of the message (the member named).
	Says string
}

// HostileWheels returns the refused variants of the pure wheel
// dist-version (py3-none-any, a module dist/__init__.py): members and
// RECORD rows escaping the root (../, absolute), a symbolic link member,
// a RECORD hash or size that is not the member's, a zip bomb (a member
// over the compression ratio bound), two members of one name.
func HostileWheels(t testing.TB, dist, version string) []Hostile {
	t.Helper()
	di := dist + "-" + version + ".dist-info"
	mod := File{Name: dist + "/__init__.py", Body: "X = 1\n"}
	row := func(f File) string {
		s := sha256.Sum256([]byte(f.Body))
		return fmt.Sprintf("%s,sha256=%s,%d\n", f.Name, base64.RawURLEncoding.EncodeToString(s[:]), len(f.Body))
	}
	meta := []File{
		{Name: di + "/METADATA", Body: fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", dist, version)},
		{Name: di + "/WHEEL", Body: "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	// withRecord zips files plus meta and a RECORD of their rows and extra.
	withRecord := func(extra string, files ...File) []byte {
		all := append(append([]File{}, files...), meta...)
		var rec strings.Builder
		for _, f := range all {
			rec.WriteString(row(f))
		}
		rec.WriteString(extra + di + "/RECORD,,\n")
		return Zip(t, append(all, File{Name: di + "/RECORD", Body: rec.String()})...)
	}
	// tampered has mod in RECORD as other bytes were.
	tampered := func(claimed File) []byte {
		all := append([]File{mod}, meta...)
		rec := row(claimed)
		for _, f := range meta {
			rec += row(f)
		}
		return Zip(t, append(all, File{Name: di + "/RECORD", Body: rec + di + "/RECORD,,\n"})...)
	}
	s := sha256.Sum256([]byte(mod.Body))
	wrongSize := fmt.Sprintf("%s,sha256=%s,%d\n", mod.Name, base64.RawURLEncoding.EncodeToString(s[:]), len(mod.Body)+1)
	return []Hostile{
		{"member with ../", Wheel(t, dist, version, mod, File{Name: "../evil.py", Body: "x"}), safepath.ErrUnsafe, "../evil.py"},
		{"member with a deep ../", Wheel(t, dist, version, mod, File{Name: dist + "/../../evil.py", Body: "x"}), safepath.ErrUnsafe, "evil.py"},
		{"absolute member", Wheel(t, dist, version, mod, File{Name: "/etc/evil", Body: "x"}), safepath.ErrUnsafe, "/etc/evil"},
		{"RECORD row with ../", withRecord("../../evil.py,sha256=AAAA,1\n", mod), safepath.ErrUnsafe, "RECORD"},
		{"RECORD row absolute", withRecord("/etc/passwd,sha256=AAAA,1\n", mod), safepath.ErrUnsafe, "RECORD"},
		{"symlink member", Wheel(t, dist, version, mod, File{Name: dist + "/link.py", Body: "/etc/passwd", Mode: fs.ModeSymlink | 0o777}), safepath.ErrUnsafe, "link.py"},
		{"RECORD hash mismatch", tampered(File{Name: mod.Name, Body: "X = 2\n"}), wheel.ErrRecord, mod.Name},
		{"RECORD size mismatch", func() []byte {
			all := append([]File{mod}, meta...)
			rec := wrongSize
			for _, f := range meta {
				rec += row(f)
			}
			return Zip(t, append(all, File{Name: di + "/RECORD", Body: rec + di + "/RECORD,,\n"})...)
		}(), wheel.ErrRecord, mod.Name},
		{"zip bomb", Wheel(t, dist, version, mod, File{Name: dist + "/big.bin", Body: strings.Repeat("\x00", 4<<20)}), wheel.ErrTooLarge, "big.bin"},
		{"duplicate member", withRecord("", mod, mod), wheel.ErrDuplicate, mod.Name},
	}
}
