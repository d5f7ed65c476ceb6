package spark

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestK8sJourneyTokenRotation is scenario 6 of issue 25, the token problem:
// the submission's token (spark.kubernetes.authenticate.submission.
// oauthTokenFile) is a ServiceAccount token bound to a Secret. While the
// driver runs, a new token replaces the file (renamed over it, as the
// kubelet's projected volumes do) and the old one is revoked (its Secret
// deleted: the API server then answers 401 to it). prebake re-reads the
// file for every request, keeps polling with the new token, and reports
// the driver's real end: exit code 3, passed through.
func TestK8sJourneyTokenRotation(t *testing.T) {
	t.Parallel() // the journeys overlap, two at a time (-parallel)
	j := newJourney(t, "journey-token")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cli := j.c.Client
	if err := j.c.EditServiceAccount(ctx, j.ns, "submitter"); err != nil {
		t.Fatal(err)
	}
	// token returns a token of the submitter bound to a new Secret name:
	// deleting the Secret revokes it.
	token := func(name string) string {
		t.Helper()
		tok, err := j.c.BoundToken(ctx, j.ns, "submitter", name)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	old := token("submission-token-1")
	if err := os.WriteFile(j.tokenFile, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startPrebake(t, j.env, j.args([]string{"--image-target", j.c.Registry + "/spark-jobs"}, nil, "sleep", "30", "3")...)
	driver := j.waitDriverRunning(t, p, 5*time.Minute)

	fresh := token("submission-token-2")
	tmp := filepath.Join(filepath.Dir(j.tokenFile), ".token.new")
	if err := os.WriteFile(tmp, []byte(fresh), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, j.tokenFile); err != nil {
		t.Fatal(err)
	}
	if err := cli.CoreV1().Secrets(j.ns).Delete(ctx, "submission-token-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The old token is refused from now on (the API server may cache a
	// success for a few seconds).
	rotated := time.Now()
	for status(t, j, old) != http.StatusUnauthorized {
		if time.Since(rotated) > 30*time.Second {
			t.Fatalf("the old token is still accepted 30s after its Secret was deleted")
		}
		time.Sleep(time.Second)
	}
	revoked := time.Now()
	if s := status(t, j, fresh); s != http.StatusOK {
		t.Fatalf("the new token: HTTP %d", s)
	}
	t.Logf("old token revoked %s after the rotation", revoked.Sub(rotated).Round(100*time.Millisecond))

	r := p.wait(t, 4*time.Minute)
	res := parseResult(t, r)
	if r.code != 3 || intp(res.DriverExitCode) != "3" || res.Source != "driver" {
		t.Errorf("exit %d driverExitCode %s source %q, want 3, 3, driver\nstdout:\n%s\nstderr:\n%s", r.code, intp(res.DriverExitCode), res.Source, r.stdout, r.stderr)
	}
	got, err := cli.CoreV1().Pods(j.ns).Get(ctx, driver.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var finished time.Time
	for _, cs := range got.Status.ContainerStatuses {
		if cs.State.Terminated != nil {
			finished = cs.State.Terminated.FinishedAt.Time
		}
	}
	if !finished.After(revoked) {
		t.Errorf("the driver finished at %s, before the old token was revoked (%s): the rotation was not mid-run", finished, revoked)
	}
	if strings.Contains(r.stderr, "Unauthorized") {
		t.Errorf("prebake saw a 401 after the rotation:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, old) || strings.Contains(r.stdout+r.stderr, fresh) {
		t.Errorf("a token is in prebake's output")
	}
}

// status is the API server's HTTP status for a namespace's pod list with
// token.
func status(t *testing.T, j *journey, token string) int {
	t.Helper()
	ca, err := os.ReadFile(j.c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, j.c.Server+"/api/v1/namespaces/"+j.ns+"/pods", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
