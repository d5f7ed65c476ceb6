package layers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/prebake/prebake/internal/atomicfile"
)

// cachedScan returns what scan finds in l, cached by layer digest: in
// mem (guarded by mu) and, when dir is set, as JSON under dir/sub, so each
// base layer is read once per machine. scanned, when set, is called (mu
// held) after each real read, for tests.
func cachedScan[T any](ctx context.Context, mu *sync.Mutex, mem map[string]*T, l v1.Layer, dir, sub string,
	scan func(context.Context, v1.Layer) (*T, error), scanned func()) (*T, error) {
	d, err := l.Digest()
	if err != nil {
		return nil, err
	}
	put := func(v *T) {
		mu.Lock()
		mem[d.String()] = v
		mu.Unlock()
	}
	mu.Lock()
	v, ok := mem[d.String()]
	mu.Unlock()
	if ok {
		return v, nil
	}
	file := ""
	if dir != "" {
		file = filepath.Join(dir, sub, d.Hex+".json")
		if data, err := os.ReadFile(file); err == nil {
			var c T
			if json.Unmarshal(data, &c) == nil {
				put(&c)
				return &c, nil
			}
		}
	}
	v, err = scan(ctx, l)
	if err != nil {
		return nil, fmt.Errorf("reading base layer %s: %w", d, err)
	}
	if scanned != nil {
		mu.Lock()
		scanned()
		mu.Unlock()
	}
	put(v)
	if file != "" {
		// Best effort: a temp file of its own, so concurrent processes
		// scanning the same layer never rename each other's half-written file.
		if data, err := json.Marshal(v); err == nil {
			_ = atomicfile.Write(file, data, 0o644)
		}
	}
	return v, nil
}

// whiteout tells whether the layer entry at p (clean, absolute) is a
// whiteout: of the directory dir's lower contents (opaque), or of the
// path del.
func whiteout(p string) (del string, opaque, ok bool) {
	dir, base := path.Split(p)
	switch {
	case base == ".wh..wh..opq":
		return path.Clean(dir), true, true
	case strings.HasPrefix(base, ".wh."):
		return path.Join(dir, strings.TrimPrefix(base, ".wh.")), false, true
	}
	return "", false, false
}

// applyWhiteouts deletes from files (the lower layers' paths) what a
// layer's opaque directories and whiteouts hide.
func applyWhiteouts[V any](files map[string]V, opaque, whiteouts []string) {
	under := func(p, d string) bool { return p == d || strings.HasPrefix(p, d+"/") }
	for _, o := range opaque {
		for f := range files {
			if f != o && under(f, o) {
				delete(files, f)
			}
		}
	}
	for _, w := range whiteouts {
		for f := range files {
			if under(f, w) {
				delete(files, f)
			}
		}
	}
}
