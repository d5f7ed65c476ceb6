package rewrite

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/rewrite")

// fakeRewriteJars resolves each coordinate g:a:v to the Spark file name g_a-v.jar
// (no transitive closure: the resolver is not under test here).
func fakeRewriteJars(kind string) JarSource {
	return JarSourceFunc(func(ctx context.Context, p submit.Packages) (*Jars, error) {
		if p.Empty() {
			return nil, nil
		}
		j := &Jars{LockHash: "0123abcd"}
		for _, c := range strings.Split(p.Packages, ",") {
			c = strings.TrimSpace(c)
			if c == "" {
				continue
			}
			parts := strings.Split(strings.ReplaceAll(c, "/", ":"), ":")
			if len(parts) != 3 {
				continue // the resolver rejects it; not under test here
			}
			file := fmt.Sprintf("%s_%s-%s.jar", parts[0], parts[1], parts[2])
			j.Local = append(j.Local, "/cache/retrieve/0123abcd/"+file)
			switch kind {
			case "image":
				j.Cluster = append(j.Cluster, "local:///opt/spark/prebake/jars/"+file)
				j.From = "image"
			case "store":
				j.Cluster = append(j.Cluster, "s3a://bucket/prebake/jars/ab12/"+file)
				j.From = "store s3://bucket/prebake"
			}
		}
		if len(j.Local) == 0 {
			return nil, nil
		}
		return j, nil
	})
}

func setupRewriteCase(t *testing.T, c rewriteCase) (dir string, args []string, environ []string) {
	t.Helper()
	dir = t.TempDir()
	for name, content := range c.files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range c.args {
		args = append(args, strings.ReplaceAll(a, "$DIR", dir))
	}
	env := map[string]string{}
	for k, v := range c.env {
		env[k] = strings.ReplaceAll(v, "$DIR", dir)
	}
	return dir, args, testenv.Environ(env)
}

func TestRewriteGolden(t *testing.T) {
	if len(rewriteCases) < 40 {
		t.Fatalf("the golden table has %d cases; want at least 40", len(rewriteCases))
	}
	seen := map[string]bool{}
	for _, c := range rewriteCases {
		if seen[c.name] {
			t.Fatalf("duplicate case %s", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			dir, args, environ := setupRewriteCase(t, c)
			opts := []Option{WithJarSource(fakeRewriteJars(c.jars)), WithWorkDir(filepath.Join(dir, "work"))}
			if c.image != "" {
				opts = append(opts, WithImage(c.image))
			}
			r, err := applyArgsIn(context.Background(), environ, args, opts...)
			var got string
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("Apply succeeded; want an error containing %q", c.wantErr)
				}
				if !strings.Contains(err.Error(), c.wantErr) || (c.wantIs != nil && !errors.Is(err, c.wantIs)) {
					t.Fatalf("error %q does not contain %q", err, c.wantErr)
				}
				got = fmt.Sprintf("error (%v): %s\n", errdefs.KindOf(err), err)
			} else {
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				checkRewriteResult(t, args, r, environ)
				js, err := json.MarshalIndent(r, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = r.Command + "\n" + string(js) + "\n"
				if r.PropertiesFile != "" {
					data, err := os.ReadFile(r.PropertiesFile)
					if err != nil {
						t.Fatalf("edited copy: %v", err)
					}
					got += "--- edited copy:\n" + string(data)
				}
			}
			got = strings.ReplaceAll(got, dir, "$DIR")
			header := fmt.Sprintf("# source: %s\n# jars: %q image: %q\n$ spark-submit %s\n", c.source, c.jars, c.image, strings.ReplaceAll(submit.ShellQuote(args), dir, "$DIR"))
			got = header + got
			golden := filepath.Join("testdata", "rewrite", c.name+".golden")
			checkGolden(t, golden, got, "TestRewriteGolden")
		})
	}
}

// checkGolden compares got with the golden file (or writes it with
// -update); test names the test that regenerates it.
func checkGolden(t *testing.T, golden, got, test string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./submit/rewrite -run %s -update)", err, test)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
	}
}

// checkRewriteResult asserts the invariants every rewrite keeps.
func checkRewriteResult(t *testing.T, in []string, r *Result, environ []string) {
	t.Helper()
	s, err := submit.LoadSubmission(r.Args, environ)
	if err != nil {
		t.Fatalf("re-parsing the result %q: %v", r.Args, err)
	}
	if r.Action == submit.ActionSubmit {
		if left := s.PackagesSources(); len(left) > 0 {
			t.Errorf("the result still sets packages keys: %v", left)
		}
		if r.JarsFrom != "" && s.Argv.Has("--jars") {
			if _, ok := s.Argv.Conf("spark.jars"); ok {
				t.Errorf("the result has both --jars and --conf spark.jars: %q", r.Args)
			}
		}
	}
	before, err := submit.ParseArgv(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(unrelatedTokens(before), unrelatedTokens(s.Argv)); diff != "" {
		t.Errorf("dependency-unrelated arguments changed (-in +out):\n%s", diff)
	}
}

// managedConfKeys are the keys rewrite may set or remove.
var managedConfKeys = []string{"spark.jars", "spark.submit.pyFiles", "spark.driver.extraClassPath",
	"spark.kubernetes.container.image", "spark.kubernetes.driver.container.image", "spark.kubernetes.executor.container.image",
	AvoidDownloadSchemes}

// unrelatedTokens returns the tokens of every argument rewrite must keep:
// all but the packages flags and keys, the jar lists, the driver class
// path, the images and --properties-file.
func unrelatedTokens(a *submit.Argv) []string {
	var out []string
	for _, o := range a.Options {
		if _, ok := submit.PackagesFlagKey(o.Name); ok {
			continue
		}
		switch o.Name {
		case "--jars", "--py-files", "--driver-class-path", "--properties-file", "--load-spark-defaults":
			continue
		case "--conf":
			k, _ := o.ConfKV()
			if submit.IsPackagesKey(k) || slices.Contains(managedConfKeys, k) {
				continue
			}
		}
		out = append(out, o.Tokens...)
	}
	out = append(out, "<primary>", a.Primary)
	return append(out, a.AppArgs...)
}
