package layers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prebake/prebake/errdefs"
)

// TestITConcurrentBakeOneTarget is audit 3 N8: several bakes of one set into
// one fresh repository of the real distribution registry at once. They race
// on the blobs (distribution answers the manifest PUT with DIGEST_INVALID /
// MANIFEST_BLOB_UNKNOWN while another upload of the same blob commits); every
// one must succeed with the same digest, never an internal error.
func TestITConcurrentBakeOneTarget(t *testing.T) {
	reg := startRegistry(t, false)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ctx := context.Background()
	lock, paths := makeLock(t, t.TempDir(), testArtifact{"com.example:big:1.0", 2 << 20}, testArtifact{"com.example:small:1.0", 1000})
	const rounds, n = 6, 5
	retries := &raceLog{}
	for round := range rounds {
		in := BakeInput{Lock: lock, Jars: localJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageTag,
			Target: reg.Repo(fmt.Sprintf("team/race%d", round))}
		var wg sync.WaitGroup
		digests := make([]string, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := Bake(ctx, in, WithCacheDir(t.TempDir()), WithLogger(retries))
				errs[i] = err
				if err == nil {
					digests[i] = res.Digest
				}
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, bake %d: kind %v: %v", round, i, errdefs.KindOf(err), err)
			} else if digests[i] != digests[0] {
				t.Errorf("round %d, bake %d: digest %s, bake 0 pushed %s", round, i, digests[i], digests[0])
			}
		}
	}
	t.Logf("%d bakes, %d pushes retried, %d found the manifest pushed by another", rounds*n, retries.retried.Load(), retries.landed.Load())
}

// raceLog counts the push retries a bake logs.
type raceLog struct{ retried, landed atomic.Int64 }

func (l *raceLog) Printf(format string, args ...any) {
	switch s := fmt.Sprintf(format, args...); {
	case strings.Contains(s, "; retrying (attempt"):
		l.retried.Add(1)
	case strings.Contains(s, "(a concurrent push)"):
		l.landed.Add(1)
	}
}
