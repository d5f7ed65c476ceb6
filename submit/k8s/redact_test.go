package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSparkSubmitTailRedacted: spark-submit's last lines are shown again by
// prebake (text summary, JSON logTail, the error); they must not carry the
// oauthToken, URL userinfo or a presigned signature that spark-submit
// printed.
func TestSparkSubmitTailRedacted(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "spark-submit")
	script := "#!/bin/sh\necho \"args: $*\" >&2\necho 'Exception: https://user:PWINLOG@h.example/x?X-Amz-Signature=SIGINLOG' >&2\nexit 3\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "client",
		"--conf", "spark.kubernetes.authenticate.submission.oauthToken=TOK3NSECRET",
		"--conf", "spark.kubernetes.container.image=img", "--class", "a.B", "local:///app.jar"}
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			var stderr bytes.Buffer
			res, err := submitWith(context.Background(), mustLoad(t, args, nil), use(options{
				sparkSubmit: bin, quiet: true, logTail: 10,
				stderr: &stderr,
			}))
			// What `prebake submit` prints: the text form or the JSON.
			var stdout bytes.Buffer
			if output == "json" {
				if jerr := json.NewEncoder(&stdout).Encode(res); jerr != nil {
					t.Fatal(jerr)
				}
			} else {
				// The text form (cmd's renderer) shows the log tail and
				// the message.
				stdout.WriteString(strings.Join(res.LogTail, "\n") + "\n" + res.Message)
			}
			if got := endOf(err); got != endExit(3) {
				t.Fatalf("end %+v, want the driver's exit code 3: %v", got, err)
			}
			all := stdout.String() + stderr.String() + err.Error()
			for _, secret := range []string{"TOK3NSECRET", "PWINLOG", "SIGINLOG"} {
				if strings.Contains(all, secret) {
					t.Errorf("%s leaked in the %s output:\n%s", secret, output, all)
				}
			}
			if !strings.Contains(all, "oauthToken=xxxxx") || !strings.Contains(all, "https://h.example/x?REDACTED") {
				t.Errorf("the log tail lost its redacted lines:\n%s", all)
			}
		})
	}
}
