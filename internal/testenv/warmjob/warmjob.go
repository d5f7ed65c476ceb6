// Package warmjob holds the helpers of the tests that run the example warm
// Job (examples/warm-job.yaml): on the API server with the process kubelet
// (submit/k8s) and on the real node (test/spark). It resolves package sets
// with the resolver, which the cluster package may not import.
package warmjob

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/prebake/prebake/resolver"
)

func ptr[T any](v T) *T { return &v }

// Example reads the example Job (examples/warm-job.yaml, at path): its
// ServiceAccount and Job.
func Example(t testing.TB, path string) (*corev1.ServiceAccount, *batchv1.Job) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("warm-job.yaml: %d documents, want 2 (ServiceAccount, Job)", len(docs))
	}
	sa, job := &corev1.ServiceAccount{}, &batchv1.Job{}
	if err := yaml.NewYAMLOrJSONDecoder(strings.NewReader(docs[0]), 4096).Decode(sa); err != nil {
		t.Fatal(err)
	}
	if err := yaml.NewYAMLOrJSONDecoder(strings.NewReader(docs[1]), 4096).Decode(job); err != nil {
		t.Fatal(err)
	}
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("warm-job.yaml: not an Indexed Job")
	}
	return sa, job
}

// ConfigMap is the example Job's ConfigMap prebake-sets (see its comment):
// the sets file and the lock examples/sets.yaml pins
// (examples/locks/etl.lock, at lockPath); the generated sets do not use
// the lock.
func ConfigMap(t testing.TB, lockPath, sets string) *corev1.ConfigMap {
	t.Helper()
	etl, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "prebake-sets"}, Data: map[string]string{"sets.yaml": sets, "etl.lock": string(etl)}}
}

// For is the example Job with n completions, its shard argument
// made i/n, the store and repository given, and nothing else changed.
func For(t testing.TB, job *batchv1.Job, n int, store string, extra ...string) *batchv1.Job {
	t.Helper()
	j := job.DeepCopy()
	j.Spec.Completions, j.Spec.Parallelism = ptr(int32(n)), ptr(int32(n))
	if m := j.Spec.MaxFailedIndexes; m != nil && *m > int32(n) {
		j.Spec.MaxFailedIndexes = ptr(int32(n)) // the API's bound: <= completions
	}
	c := &j.Spec.Template.Spec.Containers[0]
	var args []string
	shard := false
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--shard="):
			want := fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", *job.Spec.Completions)
			if a != want {
				t.Fatalf("warm-job.yaml: shard argument %q, want %q (N = completions)", a, want)
			}
			a, shard = fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", n), true
		case strings.HasPrefix(a, "--store="):
			a = "--store=" + store
		case strings.HasPrefix(a, "--region="):
			if strings.HasPrefix(store, "file:") {
				continue
			}
		}
		args = append(args, a)
	}
	if !shard {
		t.Fatal("warm-job.yaml: no --shard argument")
	}
	c.Args = append(args, extra...)
	return j
}

// CorpusSets returns n package sets of one module each from the Maven
// repository in repoDir (../shared/corpus/repo-debian, testdata/demo-repo):
// every module with a jar, in path order, that resolves there.
func CorpusSets(t testing.TB, repoDir string, n int) []string {
	t.Helper()
	repoDir, err := filepath.Abs(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	var coords []string
	filepath.WalkDir(repoDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".pom") {
			return nil
		}
		if _, err := os.Stat(strings.TrimSuffix(p, ".pom") + ".jar"); err != nil {
			return nil
		}
		rel, _ := filepath.Rel(repoDir, filepath.Dir(p))
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) < 3 {
			return nil
		}
		v, a := parts[len(parts)-1], parts[len(parts)-2]
		coords = append(coords, strings.Join(parts[:len(parts)-2], ".")+":"+a+":"+v)
		return nil
	})
	sort.Strings(coords)
	cache := t.TempDir()
	var out []string
	var firstErr error
	for _, c := range coords {
		_, err := resolver.Resolve(context.Background(), resolver.Request{Packages: []string{c}, Repositories: []string{"file://" + repoDir + "/"},
			NoDefaultRepositories: true, CacheDir: cache})
		if err == nil {
			out = append(out, c)
		} else if firstErr == nil {
			firstErr = err
		}
		if len(out) == n {
			return out
		}
	}
	t.Fatalf("only %d of %d corpus modules resolve (of %d; first error: %v)", len(out), n, len(coords), firstErr)
	return nil
}

func SetsYAML(coords []string) string {
	var b strings.Builder
	b.WriteString("sets:\n")
	for i, c := range coords {
		fmt.Fprintf(&b, "  - name: s%03d\n    packages: [%q]\n", i, c)
	}
	return b.String()
}

// StoreState checks a file:// store: the set manifests (each a complete
// JSON manifest whose jars are all in the store with their size) and no
// temporary or partial file anywhere.
func StoreState(t testing.TB, dir string) (sets int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("store: %v", err)
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			t.Errorf("store holds a temporary file %s", p)
		}
		return nil
	})
	manifests, _ := filepath.Glob(filepath.Join(dir, "sets", "*.json"))
	for _, m := range manifests {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var man struct {
			Jars []struct {
				Path string `json:"path"`
				Size int64  `json:"size"`
			} `json:"jars"`
		}
		if err := json.NewDecoder(bytes.NewReader(data)).Decode(&man); err != nil || len(man.Jars) == 0 {
			t.Errorf("manifest %s: %v (%d jars)", m, err, len(man.Jars))
			continue
		}
		for _, j := range man.Jars {
			st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(j.Path)))
			if err != nil || st.Size() != j.Size {
				t.Errorf("manifest %s: jar %s: %v (size %v, want %d)", filepath.Base(m), j.Path, err, st, j.Size)
			}
		}
	}
	return len(manifests)
}
