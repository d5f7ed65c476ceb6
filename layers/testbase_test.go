package layers

import (
	"archive/zip"
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var updateBase = flag.Bool("update-base", false, "regenerate ../testdata/base-image")

// baseImageDir is the committed synthetic Spark base (an OCI layout).
const baseImageDir = "../testdata/base-image"

// baseImageTag is its multi-platform tag; baseImageAmd64Tag a single image.
const (
	baseImageTag      = "3.5.0"
	baseImageAmd64Tag = "3.5.0-amd64"
)

// sparkJars are the jars of the synthetic Spark 3.5.0 / Scala 2.12 base.
var sparkJars = []string{
	"commons-io-2.13.0.jar",
	"commons-lang3-3.12.0.jar",
	"guava-14.0.1.jar",
	"jackson-annotations-2.15.2.jar",
	"jackson-core-2.15.2.jar",
	"jackson-databind-2.15.2.jar",
	"log4j-1.2-api-2.20.0.jar",
	"scala-library-2.12.18.jar",
	"slf4j-api-2.0.7.jar",
	"spark-catalyst_2.12-3.5.0.jar",
	"spark-core_2.12-3.5.0.jar",
	"spark-sql_2.12-3.5.0.jar",
	"zstd-jni-1.5.5-4.jar",
}

// tinyJar is a valid jar holding only a manifest naming it.
func tinyJar(t testing.TB, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "META-INF/MANIFEST.MF", Method: zip.Deflate, Modified: time.Date(2023, 9, 9, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "Manifest-Version: 1.0\r\nImplementation-Title: "+name+"\r\n\r\n")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func bytesFile(name string, mode int64, data []byte) File {
	return File{Name: name, Mode: mode, Size: int64(len(data)), Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
}

// sparkBaseSpec is the synthetic base: a jars layer shared by every
// platform and a small per-platform layer.
func sparkBaseSpec(t testing.TB, target string, jars []string, platforms ...string) BuildSpec {
	var jarFiles []File
	for _, j := range jars {
		jarFiles = append(jarFiles, bytesFile("/opt/spark/jars/"+j, 0o644, tinyJar(t, j)))
	}
	spec := BuildSpec{
		Target:     target,
		Entrypoint: []string{"/opt/spark/bin/spark-submit"},
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SPARK_HOME=/opt/spark"},
		WorkingDir: "/opt/spark/work-dir",
		Labels:     map[string]string{"org.opencontainers.image.description": "prebake synthetic Spark 3.5.0 / Scala 2.12 base for tests and make demo"},
	}
	for _, p := range platforms {
		spec.Platforms = append(spec.Platforms, PlatformFiles{Platform: p, Layers: [][]File{
			jarFiles,
			{
				bytesFile("/opt/spark/bin/spark-submit", 0o755, []byte("#!/bin/sh\necho \"synthetic Spark 3.5.0 base ("+p+"): $*\"\n")),
				bytesFile("/opt/spark/RELEASE", 0o644, []byte("Spark 3.5.0 (synthetic, git revision none) built for Hadoop 3.3.4\n")),
			},
		}})
	}
	return spec
}

// writeSparkBase writes the synthetic base layout into dir.
func writeSparkBase(t testing.TB, dir string) {
	t.Helper()
	ctx := context.Background()
	if _, err := BuildImage(ctx, sparkBaseSpec(t, "oci:"+dir+":"+baseImageTag, sparkJars, "linux/amd64", "linux/arm64"), WithEpoch(DefaultEpoch)); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildImage(ctx, sparkBaseSpec(t, "oci:"+dir+":"+baseImageAmd64Tag, sparkJars, "linux/amd64"), WithEpoch(DefaultEpoch)); err != nil {
		t.Fatal(err)
	}
}

// TestBaseImageUpToDate regenerates the synthetic base in a temp dir and
// compares it with the committed one (-update-base rewrites it).
func TestBaseImageUpToDate(t *testing.T) {
	if *updateBase {
		os.RemoveAll(baseImageDir)
		writeSparkBase(t, baseImageDir)
		filepath.Walk(baseImageDir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				os.Chmod(p, 0o644)
			}
			return nil
		})
	}
	dir := filepath.Join(t.TempDir(), "base")
	writeSparkBase(t, dir)
	want, err := os.ReadFile(filepath.Join(baseImageDir, "index.json"))
	if err != nil {
		t.Fatalf("committed base image: %v (run go test ./layers -run TestBaseImageUpToDate -update-base)", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("testdata/base-image is stale:\n got %s\nwant %s", got, want)
	}
}
