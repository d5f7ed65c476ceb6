package layers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers/registrytest"
)

func ociArtifact() *Artifact {
	a := &Artifact{ArtifactType: "application/vnd.example.v1", ConfigMediaType: "application/vnd.example.config.v1+json",
		Config: []byte(`{"files":2}`), Annotations: map[string]string{"k": "v"}, Tag: "t1"}
	for _, body := range []string{"first file", "second file"} {
		s := sha256.Sum256([]byte(body))
		a.Blobs = append(a.Blobs, ArtifactBlob{Title: body[:5] + ".txt", MediaType: "text/plain", Sha256: hex.EncodeToString(s[:]), Size: int64(len(body)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }})
	}
	return a
}

// TestArtifactRoundTrip pushes an artifact to a registry (in process) and
// a layout, twice each: the same digest every time (ArtifactDigest says it
// beforehand), and the pull gives back the type, config, annotations and
// blobs. A manifest or config over its bound is bad input.
func TestArtifactRoundTrip(t *testing.T) {
	a := ociArtifact()
	want, err := ArtifactDigest(a)
	if err != nil {
		t.Fatal(err)
	}
	host := registrytest.InProcess(t)
	dir := t.TempDir()
	for _, ref := range []string{host + "/team/art", host + "/team/art:x", "oci:" + filepath.Join(dir, "l"), "oci:" + filepath.Join(dir, "l") + ":t2"} {
		got, err := PushArtifact(context.Background(), ref, ociArtifact())
		if err != nil {
			t.Fatalf("push %s: %v", ref, err)
		}
		if !strings.HasSuffix(got, "@"+want) {
			t.Errorf("push %s: %s, want digest %s", ref, got, want)
		}
		p, err := PullArtifact(context.Background(), got, 1<<20, 1<<10)
		if err != nil {
			t.Fatalf("pull %s: %v", got, err)
		}
		type view struct {
			Type, ConfigType, Config string
			Ann                      map[string]string
			Titles, Bodies           []string
		}
		v := view{Type: p.ArtifactType, ConfigType: p.ConfigMediaType, Config: string(p.Config), Ann: p.Annotations}
		for _, b := range p.Blobs {
			rc, err := b.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			v.Titles, v.Bodies = append(v.Titles, b.Title), append(v.Bodies, string(data))
		}
		wantView := view{Type: a.ArtifactType, ConfigType: a.ConfigMediaType, Config: `{"files":2}`, Ann: map[string]string{"k": "v"},
			Titles: []string{"first.txt", "secon.txt"}, Bodies: []string{"first file", "second file"}}
		if diff := cmp.Diff(wantView, v); diff != "" {
			t.Errorf("pull %s (-want +got):\n%s", got, diff)
		}
		if _, err := PullArtifact(context.Background(), got, 10, 1<<10); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("pull %s with a 10-byte manifest bound: %v", got, err)
		}
		if _, err := PullArtifact(context.Background(), got, 1<<20, 3); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("pull %s with a 3-byte config bound: %v", got, err)
		}
	}
}
