package wheel

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchFiles is a synthetic wheel of about 50 MB: 100 modules of 512 KiB,
// half random bytes (deflate cannot shrink them), half text of 18 letters
// (deflate halves it).
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
	var cpu cpuMeter
	for i := 0; b.Loop(); i++ {
		root := filepath.Join(dir, fmt.Sprint("root", i))
		cpu.start()
		if _, err := InstallFile(context.Background(), path, root); err != nil {
			b.Fatal(err)
		}
		cpu.stop()
		b.StopTimer()
		os.RemoveAll(root)
		b.StartTimer()
	}
	b.ReportMetric(float64(len(data))/float64(size), "zip/raw")
	cpu.report(b, size)
}

// BenchmarkFloor writes and hashes the synthetic wheel's files with no zip:
// the floor Install's MB/s compares with.
func BenchmarkFloor(b *testing.B) {
	files := benchFiles()
	dir := b.TempDir()
	size := benchSize(files)
	b.SetBytes(size)
	var cpu cpuMeter
	for i := 0; b.Loop(); i++ {
		root := filepath.Join(dir, fmt.Sprint("root", i))
		cpu.start()
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
		cpu.stop()
		b.StopTimer()
		os.RemoveAll(root)
		b.StartTimer()
	}
	cpu.report(b, size)
}

// cpuMeter adds up the process's CPU time (user and system) between start
// and stop: on a shared machine MB per CPU second varies less than MB/s.
type cpuMeter struct {
	at, total time.Duration
	n         int
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru) //nolint:errcheck // RUSAGE_SELF does not fail
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (c *cpuMeter) start() { c.at = cpuTime() }
func (c *cpuMeter) stop()  { c.total += cpuTime() - c.at; c.n++ }

// report reports MB (of size bytes an operation) per CPU second.
func (c *cpuMeter) report(b *testing.B, size int64) {
	if c.total > 0 {
		b.ReportMetric(float64(size)*float64(c.n)/1e6/c.total.Seconds(), "MB/cpu-s")
	}
}
