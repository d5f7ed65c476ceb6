package k8s

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// Bounds of a batch (ReadBatch, SubmitBatch).
const (
	MaxBatch         = 10000   // applications in one batch
	MaxBatchLine     = 1 << 20 // bytes of one entry (one spark-submit argv)
	MaxBatchParallel = 256     // submissions in flight at once
)

// BatchEntry is one application of a batch: the spark-submit arguments
// (without the spark-submit binary) and the line of the batch they came
// from (1-based), for messages.
type BatchEntry struct {
	Line int
	Args []string
}

// ReadBatch reads a batch: one JSON array of strings per line (one
// spark-submit argv each, e.g. ["--master","k8s://https://h:6443",
// "--deploy-mode","cluster","--class","C","local:///app.jar"]); blank lines
// and lines starting with # are skipped. name names the input in errors.
// A line that is not such an array, longer than MaxBatchLine, or more than
// MaxBatch entries is errdefs.Invalid naming name and the line.
func ReadBatch(r io.Reader, name string) ([]BatchEntry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxBatchLine)
	var out []BatchEntry
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		if len(out) == MaxBatch {
			return nil, errdefs.Errorf(errdefs.Invalid, "batch %s: more than %d applications (line %d); split it", name, MaxBatch, line)
		}
		var args []string
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&args); err != nil || dec.More() {
			why := "trailing data after the array"
			if err != nil {
				why = err.Error()
			}
			return nil, errdefs.Errorf(errdefs.Invalid, "batch %s line %d: want a JSON array of strings (one spark-submit argv): %s", name, line, why)
		}
		if len(args) == 0 {
			return nil, errdefs.Errorf(errdefs.Invalid, "batch %s line %d: an empty argv", name, line)
		}
		out = append(out, BatchEntry{Line: line, Args: args})
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, errdefs.Errorf(errdefs.Invalid, "batch %s line %d: longer than %d bytes", name, line+1, MaxBatchLine)
		}
		return nil, errdefs.Errorf(errdefs.Invalid, "batch %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, errdefs.Errorf(errdefs.Invalid, "batch %s: no application (one JSON array of spark-submit arguments per line)", name)
	}
	return out, nil
}

// SubmitBatch submits every application of apps with the native submitter,
// at most parallel at a time, and returns one Result per application, in
// the order of apps. It does not wait for the applications: each run ends
// once its driver objects exist (PhaseSubmitted, as
// spark.kubernetes.submission.waitAppCompletion=false does), whatever the
// submission's own conf says. Submissions with the same master and
// credentials share one API client (its connections, no client-side rate
// limit: parallel bounds the requests in flight). Each submission must be
// a k8s:// cluster-mode one (else its Result fails, errdefs.BadArgument).
// The returned error is set only when the batch itself is wrong (parallel
// outside 1..MaxBatchParallel, more than MaxBatch submissions); a
// submission's own failure is its Result's Err.
func (b *Backend) SubmitBatch(ctx context.Context, apps []*submit.Prepared, parallel int) ([]*Result, error) {
	if parallel < 1 || parallel > MaxBatchParallel {
		return nil, errdefs.Optionf(errdefs.BadArgument, "k8s.SubmitBatch.parallel", "parallel %d: must be 1 to %d", parallel, MaxBatchParallel)
	}
	if len(apps) > MaxBatch {
		return nil, errdefs.Errorf(errdefs.Invalid, "batch of %d applications: more than %d; split it", len(apps), MaxBatch)
	}
	o := b.run(nil)
	o.submitter, o.noWait = SubmitterNative, true
	o.clients = &clientCache{m: map[credsKey]kubernetes.Interface{}}
	o.stderr = &lockedWriter{w: o.stderr}
	results := make([]*Result, len(apps))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, app := range apps {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			res := &Result{Backend: "k8s", Phase: "Submitting", Timings: Timings{Started: time.Now()}}
			oi := *o
			oi.environ, oi.imageSparkVersion = app.Sub.Environ(), app.DriverSparkVersion
			err := batchOne(ctx, app.Sub, &oi, res)
			res.finish(time.Now(), err)
			results[i] = res
		}()
	}
	wg.Wait()
	return results, nil
}

// batchOne is one submission of a batch: runK8s with the native submitter,
// refused before anything is created when it is not a cluster-mode one.
func batchOne(ctx context.Context, sub *submit.Submission, o *options, res *Result) error {
	if ctx.Err() != nil {
		return interruptedErr(ctx, res, "")
	}
	if a := newK8sArgs(sub); a.deployMode() != "cluster" {
		return errdefs.Errorf(errdefs.BadArgument, "a batch submits cluster-mode applications only (deploy mode %q)", a.deployMode())
	}
	return runK8s(ctx, sub, o, res)
}

// credsKey identifies the credentials a client was built from: two
// submissions with equal keys send the same credentials to the same
// server.
type credsKey struct {
	host, token, tokenFile, caFile, certFile, keyFile, context, saDir string
}

// clientCache is a batch's API clients, one per credentials.
type clientCache struct {
	mu sync.Mutex
	m  map[credsKey]kubernetes.Interface
}

// get returns the client of c's credentials, built once.
func (cc *clientCache) get(c *k8sCreds, o *options) (kubernetes.Interface, error) {
	k := credsKey{c.host, c.token, c.tokenFile, c.caFile, c.certFile, c.keyFile, c.context, c.saDir}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cs := cc.m[k]; cs != nil {
		return cs, nil
	}
	cfg, err := c.Config()
	if err != nil {
		return nil, fmt.Errorf("credentials from %s: %w", c.Source(), err)
	}
	cfg.Timeout = o.apiCallTimeout
	// No client-side throttle (client-go's default is 5 requests/s): the
	// batch's parallel bound is the limit, and the API server's own.
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("client for %s: %w", redact.URL(cfg.Host), err))
	}
	cc.m[k] = cs
	return cs, nil
}

// lockedWriter serialises the progress lines of concurrent submissions.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
