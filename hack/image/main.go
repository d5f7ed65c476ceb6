// Command image builds prebake's own container image as ko does: a static
// binary per platform on an empty (scratch) base with Debian's CA
// certificates, written by prebake's own layers package as a multi-arch OCI
// layout. No Docker daemon is involved, and the same sources give the same
// digest (SOURCE_DATE_EPOCH, sorted entries, uid/gid 0).
//
//	go run ./hack/image -target oci:dist/prebake-image:latest [-platforms linux/amd64,linux/arm64]
//
// The image serves `prebake bake` and `prebake warm` jobs. Submissions that run
// spark-submit run in the Spark image instead, with prebake added
// (`prebake bake image --add-self`).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/layers"
)

func main() {
	target := flag.String("target", "oci:dist/prebake-image:latest", "where to write the image: oci:PATH:TAG or a registry reference")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	caFile := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to include (Debian's ca-certificates)")
	flag.Parse()
	if err := run(context.Background(), *target, strings.Split(*platforms, ","), *caFile); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, target string, platforms []string, caFile string) error {
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
		bin := filepath.Join(tmp, strings.ReplaceAll(p, "/", "-"), "prebake")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, "./cmd/prebake")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+strings.Split(arch, "/")[0])
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
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

// fileFrom describes a file for a layer, with its sha256 as the cache ID.
func fileFrom(name, src string, mode int64) (layers.File, error) {
	sum, n, err := digest.File(src)
	if err != nil {
		return layers.File{}, err
	}
	return layers.File{Name: name, Mode: mode, Size: n, ID: sum,
		Open: func() (io.ReadCloser, error) { return os.Open(src) }}, nil
}
