// Command image builds prebake's own container image as ko does: a static
// binary per platform on an empty (scratch) base with Debian's CA
// certificates, written by prebake's own layers package as a multi-arch OCI
// layout. No Docker daemon is involved, and the same sources give the same
// digest (SOURCE_DATE_EPOCH, sorted entries, uid/gid 0).
//
//	go run ./hack/image -target oci:dist/prebake-image:latest [-platforms linux/amd64,linux/arm64] [-cache DIR] [-version V]
//
// With -cache, each platform's binary is kept in DIR under a hash of what
// builds it (the Go files and embedded files of the main module's packages
// that cmd/prebake imports, go.mod, go.sum, the Go version, the flags with
// the -version stamped), so
// an unchanged tree builds no binary again (the tests' image, issue 25).
//
// The image holds no writable directory: HOME and PREBAKE_CACHE (set in its
// config) need a mounted volume (docs/contributing.md, "make image").
//
// The image serves `prebake bake` and `prebake warm` jobs. Submissions that run
// spark-submit run in the Spark image instead, with prebake added
// (`prebake bake image --add-self`).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/layers"
)

func main() {
	target := flag.String("target", "oci:dist/prebake-image:latest", "where to write the image: oci:PATH:TAG or a registry reference")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	version := flag.String("version", "", "what `prebake --version` prints (make image passes the Makefile's VERSION, as make build does)")
	caFile := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to include (Debian's ca-certificates)")
	cache := flag.String("cache", "", "keep the built binaries in this directory, by a hash of their sources (none: build every time)")
	flag.Parse()
	if err := run(context.Background(), *target, strings.Split(*platforms, ","), *caFile, *cache, *version); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, target string, platforms []string, caFile, cache, version string) error {
	flags, err := buildFlags(version)
	if err != nil {
		return err
	}
	ca, err := fileFrom("/etc/ssl/certs/ca-certificates.crt", caFile, 0o644)
	if err != nil {
		return fmt.Errorf("CA certificates %s (apt-get install ca-certificates): %w", caFile, err)
	}
	tmp, err := os.MkdirTemp("", "prebake-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	spec := layers.BuildSpec{
		Target:     target,
		Entrypoint: []string{"/usr/local/bin/prebake"},
		Env:        []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=/home/prebake", "USER=prebake", "PREBAKE_CACHE=/tmp/prebake-cache"},
		User:       "65532:65532",
		WorkingDir: "/",
		Labels:     map[string]string{"org.opencontainers.image.source": "https://github.com/prebake/prebake"},
	}
	for _, p := range platforms {
		osName, arch, ok := strings.Cut(p, "/")
		if !ok || osName != "linux" {
			return fmt.Errorf("platform %q: want linux/ARCH", p)
		}
		bin, err := binary(ctx, osName, strings.Split(arch, "/")[0], tmp, cache, flags)
		if err != nil {
			return fmt.Errorf("building prebake for %s: %w", p, err)
		}
		binFile, err := fileFrom("/usr/local/bin/prebake", bin, 0o755)
		if err != nil {
			return err
		}
		spec.Platforms = append(spec.Platforms, layers.PlatformFiles{
			Platform: p,
			Layers:   [][]layers.File{{ca}, {binFile}},
		})
	}
	built, err := layers.BuildImage(ctx, spec)
	if err != nil {
		return err
	}
	fmt.Println(built.Ref)
	for _, im := range built.Images {
		fmt.Printf("  %s %s\n", im.Platform, im.Digest)
	}
	return nil
}

// versionVar is the variable `prebake --version` prints (cmd/version.go),
// set at link time as make build sets it.
const versionVar = "github.com/prebake/prebake/cmd.version"

// buildFlags are go build's flags for the image's binary: static,
// reproducible (no build ID, no paths), and stamped with version when it is
// not "" (a version is part of what the binary is: the same sources and
// version give the same binary).
func buildFlags(version string) ([]string, error) {
	ldflags := "-s -w -buildid="
	if version != "" {
		if !versionRE.MatchString(version) {
			return nil, fmt.Errorf("version %q: want letters, digits and . _ + - only (git describe's output)", version)
		}
		ldflags += " -X " + versionVar + "=" + version
	}
	return []string{"-trimpath", "-ldflags=" + ldflags}, nil
}

// versionRE is what a version may hold: nothing go build's -ldflags would
// split or quote.
var versionRE = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)

// binary builds prebake for goos/goarch into tmp, or, with a cache
// directory, returns the cached binary of the same sources (building and
// adding it when missing).
func binary(ctx context.Context, goos, goarch, tmp, cache string, buildFlags []string) (string, error) {
	env := append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	build := func(out string) error {
		cmd := exec.CommandContext(ctx, "go", append(append([]string{"build"}, buildFlags...), "-o", out, "./cmd/prebake")...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, os.Stderr, os.Stderr
		return cmd.Run()
	}
	if cache == "" {
		bin := filepath.Join(tmp, goos+"-"+goarch, "prebake")
		return bin, build(bin)
	}
	key, err := sourceKey(ctx, env, buildFlags)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, key[:32], goos+"-"+goarch, "prebake")
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		_ = os.Chtimes(filepath.Dir(bin), now, now) // in use: pruneCache keeps it
		fmt.Fprintf(os.Stderr, "image: prebake for %s/%s from the cache (%s)\n", goos, goarch, filepath.Dir(bin))
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	part := fmt.Sprintf("%s.%d.part", bin, os.Getpid())
	defer os.Remove(part)
	if err := build(part); err != nil {
		return "", err
	}
	if err := os.Rename(part, bin); err != nil { // atomic: concurrent builds of one key give the same file
		return "", err
	}
	pruneCache(cache, filepath.Dir(filepath.Dir(bin)))
	return bin, nil
}

// sourceKey hashes what go build reads from the main module for
// ./cmd/prebake under env (GOOS, GOARCH, CGO_ENABLED): each package's Go,
// assembly and embedded files, go.mod and go.sum (which pin every other
// module), the Go version and the build flags.
func sourceKey(ctx context.Context, env, buildFlags []string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f",
		`{{if .Module}}{{if .Module.Main}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .SFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}{{end}}`,
		"./cmd/prebake")
	cmd.Env, cmd.Stderr = env, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list ./cmd/prebake: %w", err)
	}
	goenv := exec.CommandContext(ctx, "go", "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED")
	goenv.Env = env
	ver, err := goenv.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", ver, buildFlags)
	files := []string{"go.mod", "go.sum"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, name := range f[1:] {
			files = append(files, filepath.Join(f[0], name))
		}
	}
	for _, f := range files {
		sum, _, err := digest.File(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", f, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pruneCache removes the cache's entries other than keep that were not
// used for a week.
func pruneCache(cache, keep string) {
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		dir := filepath.Join(cache, e.Name())
		if info, err := e.Info(); err == nil && e.IsDir() && dir != keep && time.Since(info.ModTime()) > 7*24*time.Hour {
			os.RemoveAll(dir)
		}
	}
}

// fileFrom describes a file for a layer, with its sha256 as the cache ID.
func fileFrom(name, src string, mode int64) (layers.File, error) {
	sum, n, err := digest.File(src)
	if err != nil {
		return layers.File{}, err
	}
	return layers.File{Name: name, Mode: mode, Size: n, ID: sum,
		Open: func() (io.ReadCloser, error) { return os.Open(src) }}, nil
}
