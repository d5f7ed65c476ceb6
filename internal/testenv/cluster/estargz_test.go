package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
)

// TestRealNodeEstargzImage: an image baked with eStargz layers (a shared
// layer and a per-job layer, each with its TOC annotation) onto the test
// image is pulled by the node's real containerd (its default overlayfs
// snapshotter reads eStargz as the gzip layer it is) and runs: the pod
// lists the jars with their sha256, as the lock says.
func TestRealNodeEstargzImage(t *testing.T) {
	c := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	mk := func(coords ...string) (*lock.File, []string) {
		l := &lock.File{Inputs: lock.Inputs{Packages: coords, Conflict: "latest"}}
		for _, co := range coords {
			p := strings.Split(co, ":")
			data := []byte(strings.Repeat("bytes of "+co+"\n", 5000))
			sum := sha256.Sum256(data)
			l.Artifacts = append(l.Artifacts, lock.Artifact{Coord: co, File: p[0] + "_" + p[1] + "-" + p[2] + ".jar", Sha256: hex.EncodeToString(sum[:]), Size: int64(len(data)), Repository: "https://repo1.maven.org/maven2/"})
			if err := os.WriteFile(filepath.Join(dir, hex.EncodeToString(sum[:8])), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l.Normalize()
		var paths []string
		for _, a := range l.Artifacts {
			paths = append(paths, filepath.Join(dir, a.Sha256[:16]))
		}
		return l, paths
	}
	platform, _ := mk("io.delta:delta-spark_2.12:3.2.0", "org.apache.hadoop:hadoop-aws:3.3.4")
	job, paths := mk("io.delta:delta-spark_2.12:3.2.0", "org.apache.hadoop:hadoop-aws:3.3.4", "org.apache.kafka:kafka-clients:3.4.1")
	res, err := layers.Bake(ctx, layers.BakeInput{Lock: job, Jars: lock.LocalJars(paths), Base: c.TestImage, Target: c.Registry + "/estargz-jobs", Shared: platform},
		layers.WithCompression(layers.CompressionEstargz))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Layers) != 2 {
		t.Fatalf("layers %+v, want a shared and a per-job layer", res.Layers)
	}
	// The manifest the node reads: both layers carry the TOC digest.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.Registry+"/v2/estargz-jobs/manifests/"+res.Digest, nil)
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Layers []struct {
			MediaType   string            `json:"mediaType"`
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"layers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if err != nil || len(m.Layers) < 2 {
		t.Fatalf("manifest %s: %v (%d layers)", res.Digest, err, len(m.Layers))
	}
	for _, l := range m.Layers[len(m.Layers)-2:] {
		if l.Annotations[layers.AnnotationTOCDigest] == "" || l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
			t.Errorf("layer %s: media type %s, annotations %v: want gzip with %s", l.Digest, l.MediaType, l.Annotations, layers.AnnotationTOCDigest)
		}
	}
	t.Logf("baked %s: layers %+v", res.Ref, m.Layers[len(m.Layers)-2:])
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "estargz-jars", Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: res.Ref, Command: []string{"/bin/sh", "-c", "cd " + res.JarsDir + " && /bin/busybox sha256sum *.jar"},
			}},
		},
	}
	got := runPod(ctx, t, c, pod)
	logs := podLog(ctx, t, c, pod)
	var want strings.Builder
	for _, a := range job.Artifacts {
		fmt.Fprintf(&want, "%s  %s\n", a.Sha256, a.File)
	}
	if got.Status.Phase != corev1.PodSucceeded || logs != want.String() {
		t.Errorf("pod %s, log:\n%s\nwant:\n%s\nkubelet:\n%s", got.Status.Phase, logs, want.String(), c.tail("kubelet", 20))
	}
}
