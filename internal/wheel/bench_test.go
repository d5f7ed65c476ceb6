package wheel

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// benchFiles is a synthetic wheel of about 50 MB: 100 modules of 512 KiB,
// half random bytes (like a shared library, deflate cannot shrink them),
// half text-like (shrinks about 4:1).
func benchFiles() []zf {
	r := rand.New(rand.NewPCG(1, 2))
	files := []zf{
		{name: distInfo + "/METADATA", body: "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
		{name: distInfo + "/WHEEL", body: "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"},
	}
	const alphabet = "abcdefghij klmnop\n"
	for i := range 100 {
		b := make([]byte, 512<<10)
		for j := range b {
			if i%2 == 0 {
				b[j] = byte(r.Uint32())
			} else {
				b[j] = alphabet[r.IntN(len(alphabet))]
			}
		}
		files = append(files, zf{name: fmt.Sprintf("demo/sub%d/mod%d.py", i%10, i), body: string(b)})
	}
	return files
}

func benchSize(files []zf) int64 {
	var n int64
	for _, f := range files {
		n += int64(len(f.body))
	}
	return n
}

// BenchmarkInstall installs the synthetic 50 MB wheel (MB/s of
// uncompressed bytes).
func BenchmarkInstall(b *testing.B) {
	files := benchFiles()
	data := wheelOf(b, files)
	dir := b.TempDir()
	path := filepath.Join(dir, "demo-1.0-py3-none-any.whl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	size := benchSize(files)
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		root := filepath.Join(dir, fmt.Sprint("root", i))
		if _, err := InstallFile(context.Background(), path, root); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(root)
		b.StartTimer()
	}
	b.ReportMetric(float64(len(data))/float64(size), "zip/raw")
}

// BenchmarkFloor writes and hashes the synthetic wheel's files with no zip:
// the floor Install's MB/s compares with.
func BenchmarkFloor(b *testing.B) {
	files := benchFiles()
	dir := b.TempDir()
	b.SetBytes(benchSize(files))
	for i := 0; b.Loop(); i++ {
		root := filepath.Join(dir, fmt.Sprint("root", i))
		for _, f := range files {
			p := filepath.Join(root, filepath.FromSlash(f.name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			out, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.New()
			if _, err := io.WriteString(io.MultiWriter(out, h), f.body); err != nil {
				b.Fatal(err)
			}
			out.Close()
		}
		b.StopTimer()
		os.RemoveAll(root)
		b.StartTimer()
	}
}
