package layers

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/prebake/prebake/internal/revision"
)

// SparkJarsDir is where a Spark distribution keeps its jars.
const SparkJarsDir = "/opt/spark/jars"

// Conflict is a resolved artifact that the base image already has.
type Conflict struct {
	Coord       string `json:"coord"`
	File        string `json:"file"`
	Version     string `json:"version"`
	BasePath    string `json:"basePath"`
	BaseVersion string `json:"baseVersion"`
	SameVersion bool   `json:"sameVersion"`
	// Skipped is true when BakeInput.SkipProvided dropped the jar from the layer.
	Skipped bool `json:"skipped"`
}

// Warning kinds.
const (
	WarnScalaBinary  = "scala-binary"
	WarnSparkVersion = "spark-version"
	// WarnNoSpark: the base has no spark-core jar where Spark's jars
	// should be: not a Spark image, or one that keeps Spark elsewhere.
	WarnNoSpark = "no-spark"
	// WarnHadoopVersion: a resolved Hadoop module (hadoop-aws, …) is not
	// the base's Hadoop (hadoop-client-api): its classes link against that
	// exact release.
	WarnHadoopVersion = "hadoop-version"
)

// Warning flags a likely run-time failure.
type Warning struct {
	Kind    string `json:"kind"`
	Coord   string `json:"coord"`
	Message string `json:"message"`
}

// Report is the classpath conflict report against the base image.
type Report struct {
	BaseSparkVersion string `json:"baseSparkVersion,omitempty"`
	BaseScalaBinary  string `json:"baseScalaBinary,omitempty"`
	// BaseHadoopVersion is what hadoop-client-api (else hadoop-common)
	// says; BaseJavaVersion the base image's JAVA_VERSION (a bake only).
	BaseHadoopVersion string     `json:"baseHadoopVersion,omitempty"`
	BaseJavaVersion   string     `json:"baseJavaVersion,omitempty"`
	BaseJars          int        `json:"baseJars"`
	Conflicts         []Conflict `json:"conflicts"`
	Warnings          []Warning  `json:"warnings"`
}

// layerJars is what one layer does to the jar list: the .jar files it adds
// and the paths it deletes (whiteouts, opaque directories).
type layerJars struct {
	Jars      []string `json:"jars"`
	Whiteouts []string `json:"whiteouts"`
	Opaque    []string `json:"opaque"`
}

// jarIndex caches layer file lists by layer digest, in memory and under
// dir/base-index, so each base layer is read once.
type jarIndex struct {
	mu    sync.Mutex
	mem   map[string]*layerJars
	scans int // layers read, for tests
}

var processIndex = &jarIndex{mem: map[string]*layerJars{}}

func (x *jarIndex) get(ctx context.Context, l v1.Layer, dir string) (*layerJars, error) {
	return cachedScan(ctx, &x.mu, x.mem, l, dir, "base-index", scanLayer, func() { x.scans++ })
}

// scanLayer streams the tar headers of l.
func scanLayer(ctx context.Context, l v1.Layer) (*layerJars, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	lj := &layerJars{Jars: []string{}, Whiteouts: []string{}, Opaque: []string{}}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		p := path.Clean("/" + h.Name)
		del, opaque, isWhiteout := whiteout(p)
		switch {
		case isWhiteout && opaque:
			lj.Opaque = append(lj.Opaque, del)
		case isWhiteout:
			lj.Whiteouts = append(lj.Whiteouts, del)
		case strings.HasSuffix(p, ".jar") && (h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink):
			lj.Jars = append(lj.Jars, p)
		}
	}
	return lj, nil
}

// baseJars returns the .jar files of img under dirs, by path, applying
// whiteouts layer by layer.
func baseJars(ctx context.Context, img interface{ Layers() ([]v1.Layer, error) }, dirs []string, x *jarIndex, cacheDir string) ([]string, error) {
	ls, err := img.Layers()
	if err != nil {
		return nil, err
	}
	files := map[string]bool{}
	for _, l := range ls {
		lj, err := x.get(ctx, l, cacheDir)
		if err != nil {
			return nil, err
		}
		applyWhiteouts(files, lj.Opaque, lj.Whiteouts)
		for _, j := range lj.Jars {
			files[j] = true
		}
	}
	var out []string
	for f := range files {
		for _, d := range dirs {
			if path.Dir(f) == path.Clean(d) {
				out = append(out, f)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// splitJarName splits "name-1.2.3.jar" into ("name", "1.2.3"): at the last
// "-<digit>" whose remainder has a dot, else at the last "-<digit>".
func splitJarName(file string) (name, version string) {
	s := strings.TrimSuffix(file, ".jar")
	last, lastDot := -1, -1
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '-' && s[i+1] >= '0' && s[i+1] <= '9' {
			last = i
			if strings.Contains(s[i+1:], ".") {
				lastDot = i
			}
		}
	}
	if lastDot < 0 {
		lastDot = last
	}
	if lastDot < 0 {
		return s, ""
	}
	return s[:lastDot], s[lastDot+1:]
}

var scalaSuffixRE = regexp.MustCompile(`_(2\.1[0-3]|3)$`)

// scalaBinary returns the Scala binary version of an artifact id ("" if none).
func scalaBinary(artifactID string) string {
	if m := scalaSuffixRE.FindStringSubmatch(artifactID); m != nil {
		return m[1]
	}
	return ""
}

// hadoopModules are the Hadoop connectors users add to a Spark image; each
// links against the exact Hadoop release of the image's hadoop-client-api.
var hadoopModules = map[string]bool{"org.apache.hadoop:hadoop-aws": true, "org.apache.hadoop:hadoop-azure": true,
	"org.apache.hadoop:hadoop-azure-datalake": true, "org.apache.hadoop:hadoop-aliyun": true, "org.apache.hadoop:hadoop-cos": true,
	"org.apache.hadoop:hadoop-huaweicloud": true, "org.apache.hadoop:hadoop-openstack": true}

type coord struct{ group, artifact, version, classifier string }

func parseCoord(s string) coord {
	p := strings.Split(s, ":")
	var c coord
	if len(p) > 0 {
		c.group = p[0]
	}
	if len(p) > 1 {
		c.artifact = p[1]
	}
	if len(p) > 2 {
		c.version = p[2]
	}
	if len(p) > 3 {
		c.classifier = p[3]
	}
	return c
}

// CheckJars compares resolved artifacts (coords and files, index for
// index) with the jars of a Spark distribution (paths; sparkJars, their
// directory, names it in the no-spark warning): the report bake makes
// against its base, for a local $SPARK_HOME/jars.
func CheckJars(coords, files, jars []string, sparkJars string) *Report {
	return conflictReport(coords, files, jars, sparkJars)
}

// conflictReport compares the resolved artifacts (coord, file) with the
// base's jars; sparkJars is where Spark's jars should be.
func conflictReport(coords, files []string, base []string, sparkJars string) *Report {
	r := &Report{BaseJars: len(base), Conflicts: []Conflict{}, Warnings: []Warning{}}
	byName := map[string][]string{} // jar name without version → paths
	versionOf := map[string]string{}
	for _, p := range base {
		n, v := splitJarName(path.Base(p))
		byName[n] = append(byName[n], p)
		versionOf[p] = v
		switch {
		case strings.HasPrefix(n, "spark-core_"):
			r.BaseSparkVersion = v
			if r.BaseScalaBinary == "" {
				r.BaseScalaBinary = scalaBinary(n)
			}
		case n == "scala-library":
			if i := strings.LastIndex(v, "."); i > 0 && strings.HasPrefix(v, "2.") {
				r.BaseScalaBinary = v[:i]
			}
		case n == "scala3-library_3":
			r.BaseScalaBinary = "3"
		case n == "hadoop-client-api" || (n == "hadoop-common" && r.BaseHadoopVersion == ""):
			r.BaseHadoopVersion = v
		}
	}
	if r.BaseSparkVersion == "" {
		r.Warnings = append(r.Warnings, Warning{Kind: WarnNoSpark,
			Message: fmt.Sprintf("no Spark in the base: %s has no spark-core jar; not a Spark image, or one that keeps Spark elsewhere (no Scala or Spark version check was made)", sparkJars)})
	}
	for i, cs := range coords {
		c := parseCoord(cs)
		keys := []string{c.artifact, c.group + "_" + c.artifact}
		seen := map[string]bool{}
		for _, k := range keys {
			for _, p := range byName[k] {
				if seen[p] {
					continue
				}
				seen[p] = true
				bv := versionOf[p]
				if c.classifier != "" {
					bv = strings.TrimSuffix(bv, "-"+c.classifier)
				}
				r.Conflicts = append(r.Conflicts, Conflict{
					Coord: cs, File: files[i], Version: c.version,
					BasePath: p, BaseVersion: bv, SameVersion: bv == c.version,
				})
			}
		}
		if sb := scalaBinary(c.artifact); sb != "" && r.BaseScalaBinary != "" && sb != r.BaseScalaBinary {
			r.Warnings = append(r.Warnings, Warning{Kind: WarnScalaBinary, Coord: cs,
				Message: fmt.Sprintf("%s is built for Scala %s but the base image has Scala %s", cs, sb, r.BaseScalaBinary)})
		}
		if hadoopModules[c.group+":"+c.artifact] && r.BaseHadoopVersion != "" && c.version != r.BaseHadoopVersion {
			r.Warnings = append(r.Warnings, Warning{Kind: WarnHadoopVersion, Coord: cs,
				Message: fmt.Sprintf("%s is Hadoop %s but the base image has Hadoop %s (hadoop-client-api); use %s:%s", cs, c.version, r.BaseHadoopVersion, c.artifact, r.BaseHadoopVersion)})
		}
		if c.group == "org.apache.spark" && strings.HasPrefix(c.artifact, "spark-") && r.BaseSparkVersion != "" && c.version != r.BaseSparkVersion {
			kind := WarnSparkVersion
			if revision.MajorMinor(c.version) == revision.MajorMinor(r.BaseSparkVersion) {
				kind = WarnSparkPatch
			}
			r.Warnings = append(r.Warnings, Warning{Kind: kind, Coord: cs,
				Message: fmt.Sprintf("%s is Spark %s but the base image has Spark %s", cs, c.version, r.BaseSparkVersion)})
		}
	}
	return r
}

// javaVersion is the JDK an image's environment names: JAVA_VERSION as the
// Eclipse Temurin images under Apache Spark's set it ("jdk-17.0.13+11" →
// "17.0.13+11"), else "".
func javaVersion(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "JAVA_VERSION="); ok {
			v = strings.TrimPrefix(strings.TrimPrefix(v, "jdk-"), "jdk")
			if len(v) > 64 {
				v = v[:64]
			}
			return v
		}
	}
	return ""
}
