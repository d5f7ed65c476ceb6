// Command sparkimage builds the tests' Spark base image without Docker
// (issue 25): the root file system that hack/infra.d/55-node.sh makes with
// mmdebstrap (Debian's JRE 17, tini, python3, user spark 185 owning
// /opt/spark/work-dir) as one layer, then, by prebake's layers package,
// pyspark's Spark distribution laid out as Spark's own image lays it out
// (/opt/spark/{bin,sbin,jars,python,…}; PYSPARK_PYTHON=python3 as the
// official image's python3 variant) and an entry point written here
// (entrypoint.sh: the driver and executor roles of Spark on Kubernetes).
//
//	go run ./hack/sparkimage -rootfs R.tar -spark-home $PREBAKE_CI_CACHE/pyspark-3.5.9/pyspark -out DIR
//
// writes the OCI layouts DIR/jre (the root file system alone, kept for the
// next version) and DIR/spark-<version> (tag spark-<version>);
// internal/testenv/cluster pushes the latter to its registry.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/layers"
)

//go:embed entrypoint.sh
var entrypoint []byte

// javaHome is where Debian's openjdk-17-jre-headless lives.
const javaHome = "/usr/lib/jvm/java-17-openjdk-amd64"

func main() {
	rootfs := flag.String("rootfs", "", "root file system tarball (hack/infra.d/55-node.sh)")
	sparkHome := flag.String("spark-home", "", "a Spark distribution (pyspark's pyspark directory)")
	out := flag.String("out", "", "output directory of the OCI layouts")
	flag.Parse()
	if *rootfs == "" || *sparkHome == "" || *out == "" {
		flag.Usage()
		os.Exit(64)
	}
	ref, err := run(context.Background(), *rootfs, *sparkHome, *out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sparkimage: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(ref)
}

var releaseRE = regexp.MustCompile(`^spark-core_[0-9.]+-([0-9]+\.[0-9]+\.[0-9]+)\.jar$`)

// sparkVersion reads the version from the spark-core jar's name.
func sparkVersion(home string) (string, error) {
	ents, err := os.ReadDir(filepath.Join(home, "jars"))
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if m := releaseRE.FindStringSubmatch(e.Name()); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("%s/jars: no spark-core jar", home)
}

func run(ctx context.Context, rootfs, sparkHome, out string) (string, error) {
	version, err := sparkVersion(sparkHome)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	jre := filepath.Join(out, "jre")
	if _, err := os.Stat(filepath.Join(jre, "index.json")); err != nil {
		if err := writeJRE(rootfs, jre); err != nil {
			return "", fmt.Errorf("root file system %s: %w", rootfs, err)
		}
	}
	var files []layers.File
	for _, d := range []string{"bin", "sbin", "jars", "conf", "data", "examples", "python"} {
		fs, err := distFiles(sparkHome, d)
		if err != nil {
			return "", err
		}
		files = append(files, fs...)
	}
	sum, n, err := digest.Reader(bytes.NewReader(entrypoint))
	if err != nil {
		return "", err
	}
	files = append(files, layers.File{Name: "/opt/entrypoint.sh", Mode: 0o755, Size: n, ID: sum,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(entrypoint)), nil }})
	target := "oci:" + filepath.Join(out, "spark-"+version) + ":spark-" + version
	built, err := layers.BuildImage(ctx, layers.BuildSpec{
		Base:       "oci:" + jre + ":jre",
		Target:     target,
		Platforms:  []layers.PlatformFiles{{Platform: "linux/amd64", Layers: [][]layers.File{files}}},
		Entrypoint: []string{"/opt/entrypoint.sh"},
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"JAVA_HOME=" + javaHome, "SPARK_HOME=/opt/spark", "PYSPARK_PYTHON=python3"},
		User:       "185",
		WorkingDir: "/opt/spark/work-dir",
		Labels:     map[string]string{"org.apache.spark.version": version},
	})
	if err != nil {
		return "", err
	}
	return target + " " + built.Digest, nil
}

// distFiles are the regular files under home/dir, at /opt/spark/dir.
// Symbolic links are followed; a missing dir gives none.
func distFiles(home, dir string) ([]layers.File, error) {
	root := filepath.Join(home, dir)
	if _, err := os.Stat(root); err != nil {
		return nil, nil
	}
	var files []layers.File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(home, p)
		if strings.HasSuffix(rel, ".pyc") || strings.Contains(rel, "__pycache__") {
			return nil
		}
		mode := int64(0o644)
		if st.Mode()&0o111 != 0 || dir == "bin" || dir == "sbin" {
			mode = 0o755
		}
		sum, _, err := digest.File(p)
		if err != nil {
			return err
		}
		f, err := layers.FileFromPath("/opt/spark/"+filepath.ToSlash(rel), p, mode, sum)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	return files, err
}

// writeJRE writes the root file system as a one-layer image to an OCI
// layout (tag jre).
func writeJRE(rootfs, dir string) error {
	l, err := tarball.LayerFromFile(rootfs, tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{CreatedBy: "mmdebstrap (hack/infra.d/55-node.sh)"}}); err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "JAVA_HOME=" + javaHome}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "jre"})); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
