package resolver

import (
	"context"
	"testing"
	"time"

	"github.com/prebake/prebake/resolver/repo"
)

// slowPOMs delays every POM, so that the prefetch's concurrent loads overlap.
type slowPOMs struct{ *repo.Source }

func (s slowPOMs) POM(ctx context.Context, g, a, v string) (*POMFile, error) {
	time.Sleep(20 * time.Millisecond)
	return s.Source.POM(ctx, g, a, v)
}

// TestParentCycleEnds: two dependencies whose parents form a cycle, loaded
// at once by the prefetch, end the resolution (the cycle is reported)
// instead of waiting for each other forever.
func TestParentCycleEnds(t *testing.T) {
	withParent := func(a, p string) string {
		return "<project><parent><groupId>org.dyn</groupId><artifactId>" + p + "</artifactId><version>1.0</version></parent><artifactId>" + a + "</artifactId></project>"
	}
	fs, err := newFSSource(t, []string{writeRepo(t, map[string]string{
		"root/1.0/root-1.0.pom": dynPOM("root", "1.0", "a", "b"), "root/1.0/root-1.0.jar": "j",
		"a/1.0/a-1.0.pom": withParent("a", "b"), "a/1.0/a-1.0.jar": "j",
		"b/1.0/b-1.0.pom": withParent("b", "a"), "b/1.0/b-1.0.jar": "j",
	})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err = BuildGraph(ctx, Request{Packages: []string{"org.dyn:root:1.0"}}, slowPOMs{fs}, nil)
	if d := time.Since(start); d > 30*time.Second || ctx.Err() != nil {
		t.Fatalf("BuildGraph took %v (err %v): the loads waited for each other", d, err)
	}
	t.Logf("err = %v", err)
}
