package s3test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/lock"
)

// Jar describes a generated fixture jar.
type Jar struct {
	Name string // artifact id
	Size int64
}

// Fixture writes jars of the given sizes with pseudo-random (incompressible)
// bytes under dir, seeded by seed, and returns their lock and paths in lock
// order. Nothing is committed: fixtures are made at test time.
func Fixture(t testing.TB, dir string, seed uint64, jars ...Jar) (*lock.File, []string) {
	t.Helper()
	lf := &lock.File{Inputs: lock.Inputs{Conflict: lock.ConflictLatest}}
	byFile := map[string]string{}
	for _, j := range jars {
		file := fmt.Sprintf("org.example_%s-1.0.jar", j.Name)
		p := filepath.Join(dir, fmt.Sprintf("%d-%s", seed, file))
		sum, err := writeRandom(p, j.Size, seed^hash(j.Name))
		if err != nil {
			t.Fatal(err)
		}
		byFile[file] = p
		lf.Inputs.Packages = append(lf.Inputs.Packages, "org.example:"+j.Name+":1.0")
		lf.Artifacts = append(lf.Artifacts, lock.Artifact{
			Coord: "org.example:" + j.Name + ":1.0", File: file, Sha256: sum, Size: j.Size,
			Repository: "https://repo.example.org/maven2/",
		})
	}
	lf.Normalize()
	paths := make([]string, len(lf.Artifacts))
	for i, a := range lf.Artifacts {
		paths[i] = byFile[a.File]
	}
	return lf, paths
}

func hash(s string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func writeRandom(path string, size int64, seed uint64) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24), byte(seed >> 32), byte(seed >> 40), byte(seed >> 48), byte(seed >> 56)})
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), r, size); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), f.Close()
}
