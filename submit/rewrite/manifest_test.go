package rewrite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
	"go.yaml.in/yaml/v3"
)

// The manifest golden table: inputs are testdata/manifest/<input>.yaml (real
// spark-operator examples, each naming its source in its header comment);
// goldens are testdata/manifest/<name>.golden. Refresh with
// go test ./submit/rewrite -run TestRewriteManifestGolden -update.
var manifestCases = []struct {
	name, input string
	jars        string // "" (local paths only), "image" or "store"
	image       string
	noSource    bool // no JarSource: packages are removed, nothing is added
	wantErr     string
	wantIs      error // errors.Is target, when set
	wantKind    errdefs.Kind
}{
	{name: "spark-pi-packages-image", input: "spark-pi-packages", jars: "image", image: "registry.example/spark:3.5.5-prebake"},
	{name: "spark-pi-packages-store", input: "spark-pi-packages", jars: "store"},
	{name: "spark-pi-packages-refused", input: "spark-pi-packages", wantErr: "local jar paths cannot work", wantIs: ErrNoClusterJars, wantKind: errdefs.BadArgument},
	{name: "spark-pi-packages-no-source", input: "spark-pi-packages", noSource: true},
	{name: "spark-pi-python-sparkconf-store", input: "spark-pi-python-sparkconf", jars: "store"},
	{name: "spark-pi-scheduled-image", input: "spark-pi-scheduled", jars: "image", image: "registry.example/spark:3.5.5-prebake"},
	{name: "multi-document-image", input: "multi-document", jars: "image", image: "registry.example/spark-py:prebake"},
	{name: "no-packages-image", input: "no-packages-image", jars: "image", image: "registry.example/spark:prebake"},
	{name: "no-packages-no-image", input: "no-packages-image", jars: "image"},
	{name: "unreachable-env", input: "unreachable-env", jars: "store"},
	{name: "pyspark-deps-store", input: "pyspark-deps", jars: "store-py"},
	{name: "pyspark-deps-image", input: "pyspark-deps", jars: "image-py", image: "registry.example/spark-py:3.5.5-prebake"},
	{name: "pyspark-only-store", input: "pyspark-only", jars: "store-py"},
	{name: "pyspark-only-refused", input: "pyspark-only", jars: "-py", wantErr: "the lock's 2 wheels need an image or a store", wantIs: ErrNoClusterJars, wantKind: errdefs.BadArgument},
	{name: "error-malformed", input: "error-malformed", jars: "image", image: "registry.example/spark:prebake", wantErr: "manifest error-malformed.yaml document 2", wantKind: errdefs.Invalid},
	{name: "error-packages-not-list", input: "error-packages-not-list", jars: "image", wantErr: "spec.deps.packages is not a list", wantKind: errdefs.Invalid},
}

func manifestOpts(jars, image string, noSource bool) []Option {
	var opts []Option
	switch {
	case noSource:
	case strings.HasSuffix(jars, "-py"):
		opts = append(opts, WithJarSource(fakePySource(strings.TrimSuffix(jars, "-py"))))
	default:
		opts = append(opts, WithJarSource(fakeRewriteJars(jars)))
	}
	if image != "" {
		opts = append(opts, WithImage(image))
	}
	return opts
}

func TestRewriteManifestGolden(t *testing.T) {
	for _, c := range manifestCases {
		t.Run(c.name, func(t *testing.T) {
			file := c.input + ".yaml"
			in, err := os.ReadFile(filepath.Join("testdata", "manifest", file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Manifest(context.Background(), file, in, manifestOpts(c.jars, c.image, c.noSource)...)
			got := fmt.Sprintf("# input: testdata/manifest/%s\n# jars: %q image: %q jar source: %v\n", file, c.jars, c.image, !c.noSource)
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("Manifest succeeded; want an error containing %q", c.wantErr)
				}
				if !strings.Contains(err.Error(), c.wantErr) || errdefs.KindOf(err) != c.wantKind || (c.wantIs != nil && !errors.Is(err, c.wantIs)) {
					t.Fatalf("error %q (%v); want one containing %q (%v)", err, errdefs.KindOf(err), c.wantErr, c.wantKind)
				}
				got += fmt.Sprintf("error (%v): %s\n", errdefs.KindOf(err), err)
			} else {
				if err != nil {
					t.Fatalf("Manifest: %v", err)
				}
				checkManifestResult(t, in, r, c.jars, c.image, c.noSource)
				report := *r
				report.YAML = "(above)"
				js, err := json.MarshalIndent(report, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got += "--- yaml:\n" + r.YAML + "--- json:\n" + string(js) + "\n"
			}
			golden := filepath.Join("testdata", "manifest", c.name+".golden")
			checkGolden(t, golden, got, "TestRewriteManifestGolden")
		})
	}
}

// checkManifestResult asserts the invariants of every manifest rewrite.
func checkManifestResult(t *testing.T, in []byte, r *ManifestResult, jars, image string, noSource bool) {
	t.Helper()
	out := []byte(r.YAML)
	inDocs, outDocs := splitYAMLDocuments(in), splitYAMLDocuments(out)
	if len(inDocs) != len(outDocs) || len(r.Documents) != len(inDocs) {
		t.Fatalf("%d documents in, %d out, %d reported", len(inDocs), len(outDocs), len(r.Documents))
	}
	for i, d := range r.Documents {
		if !d.Result && !bytes.Equal(inDocs[i].bytes(), outDocs[i].bytes()) {
			t.Errorf("document %d was not rewritten but its bytes changed:\n%s\n---\n%s", i+1, inDocs[i].bytes(), outDocs[i].bytes())
		}
	}
	// The output re-parses, and no SparkApplication holds packages in
	// deps or sparkConf.
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("the output does not parse: %v\n%s", err, out)
		}
		kind, _ := doc["kind"].(string)
		spec, _ := doc["spec"].(map[string]any)
		switch kind {
		case KindScheduledSparkApplication:
			spec, _ = spec["template"].(map[string]any)
		case KindSparkApplication:
		default:
			continue
		}
		deps, _ := spec["deps"].(map[string]any)
		for _, k := range []string{"packages", "repositories", "excludePackages"} {
			if _, ok := deps[k]; ok {
				t.Errorf("%s: deps.%s is still set", kind, k)
			}
		}
		conf, _ := spec["sparkConf"].(map[string]any)
		for _, k := range submit.PackagesKeys() {
			if _, ok := conf[k]; ok {
				t.Errorf("%s: sparkConf %s is still set", kind, k)
			}
		}
		if _, ok := conf["spark.jars"]; ok && deps["jars"] != nil {
			t.Errorf("%s: both deps.jars and sparkConf spark.jars are set", kind)
		}
		if image != "" {
			if spec["image"] != image {
				t.Errorf("%s: spec.image = %v; want %s", kind, spec["image"], image)
			}
			for _, role := range []string{"driver", "executor"} {
				if m, _ := spec[role].(map[string]any); m != nil && m["image"] != nil && m["image"] != image {
					t.Errorf("%s: %s.image = %v; want %s", kind, role, m["image"], image)
				}
			}
		}
	}
	// Comments are kept: every comment of the input is in the output.
	for _, line := range strings.Split(string(in), "\n") {
		if i := strings.Index(line, "# "); i >= 0 && !strings.Contains(line[:i], "'") && !strings.Contains(line[:i], `"`) {
			if c := strings.TrimSpace(line[i:]); !strings.Contains(r.YAML, c) {
				t.Errorf("comment %q was lost", c)
			}
		}
	}
	// Rewriting the output again changes nothing: it is a fixed point.
	again, err := Manifest(context.Background(), r.File, out, manifestOpts(jars, image, noSource)...)
	if err != nil {
		t.Fatalf("rewriting the output again: %v", err)
	}
	if again.YAML != r.YAML {
		t.Errorf("rewriting the output again changed it:\n%s", cmp.Diff(r.YAML, again.YAML))
	}
}

func TestSplitYAMLDocuments(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"a: 1\n", 1},
		{"# c\n---\na: 1\n", 1},
		{"a: 1\n---\nb: 2\n", 2},
		{"---\na: |\n  --- not a marker (indented)\n---x: 1\n", 1},
		{"a: 1\n--- # c\nb: 2\n...\n---\n", 3},
	}
	for _, tt := range tests {
		segs := splitYAMLDocuments([]byte(tt.in))
		var joined []byte
		for _, s := range segs {
			joined = append(joined, s.bytes()...)
		}
		if len(segs) != tt.want || string(joined) != tt.in {
			t.Errorf("splitYAMLDocuments(%q): %d documents re-joined as %q; want %d", tt.in, len(segs), joined, tt.want)
		}
	}
}

// fakePySource is fakeRewriteJars with the Python half of a set of two
// wheels (kind "store": its archive's settings, "image": in the image,
// "": no cluster target), whatever the document's packages: the Python
// input is the command line's. It checks that it is asked as an
// AppSource, with the document's image.
func fakePySource(kind string) AppSource {
	return AppSourceFunc(func(ctx context.Context, app ManifestApp) (*Jars, error) {
		if app.Image == "" || !strings.Contains(app.Where, "SparkApplication") {
			return nil, fmt.Errorf("AppJars asked with %+v, want the document's image and name", app)
		}
		j, err := fakeRewriteJars(kind).Jars(ctx, app.Packages)
		if err != nil {
			return nil, err
		}
		if j == nil {
			j = &Jars{LockHash: "0123abcd"}
		}
		j.Python = &Python{Wheels: 2}
		switch kind {
		case "store":
			j.Python.From = "store s3://bucket/prebake"
			j.Python.Conf = [][2]string{
				{"spark.archives", "s3a://bucket/prebake/archives/sha256/ab12/site-packages.tar.gz#pydeps"},
				{"spark.executorEnv.PYTHONPATH", "./pydeps"},
				{"spark.kubernetes.driverEnv.PYTHONPATH", "./pydeps"},
				{"spark.yarn.appMasterEnv.PYTHONPATH", "./pydeps"},
			}
			j.Conf = map[string]string{"spark.hadoop.fs.s3a.endpoint": "http://s3.example:9000", "spark.hadoop.fs.s3a.path.style.access": "true"}
		case "image":
			j.Python.From, j.Python.InImage = "image", true
		}
		return j, nil
	})
}
