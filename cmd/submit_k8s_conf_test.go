package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

func TestStatusKillConfIsValidated(t *testing.T) {
	for _, op := range []string{"status", "kill"} {
		var stdout, stderr bytes.Buffer
		args := []string{op, "spark:drv", "--master", "k8s://https://127.0.0.1:1",
			"--conf", "spark.kubernetes.authenticate.submission.oauthToken"}
		if code := ExecuteContext(context.Background(), args, &stdout, &stderr); code != exitcode.Usage {
			t.Errorf("%s with a --conf lacking '=': exit %d, want %d (%s)", op, code, exitcode.Usage, stderr.String())
		}
		if !strings.Contains(stderr.String(), "want key=value") {
			t.Errorf("%s: error does not say what is wrong: %s", op, stderr.String())
		}
		stderr.Reset()
		args = []string{op, "spark:drv", "--master", "k8s://https://127.0.0.1:1",
			"--conf", "spark.kubernetes.appKillPodDeletionGracePeriod=soon"}
		if code := ExecuteContext(context.Background(), args, &stdout, &stderr); code != exitcode.Usage {
			t.Errorf("%s with a bad grace period: exit %d, want %d", op, code, exitcode.Usage)
		}
	}
}
