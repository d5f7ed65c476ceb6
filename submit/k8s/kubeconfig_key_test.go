package k8s

import (
	"context"
	"encoding/base64"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/testenv"
)

// A kubeconfig whose client key is not a key is bad input (65, naming
// the kubeconfig), not a usage error (audit 4, L6).
func TestKubeconfigBadClientKey(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	testenv.WriteFile(t, kc, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {client-certificate-data: `+b64("not a certificate")+`, client-key-data: `+b64("not a key")+`}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`)
	env := map[string]string{"KUBECONFIG": kc}
	_, err := statusWith(context.Background(), "k8s://https://127.0.0.1:1", "default:drv", WithEnviron(mapEnv(env)),
		WithConf(map[string]string{confContext: "ctx"}), WithInClusterDir(t.TempDir()), WithStderr(io.Discard))
	if errdefs.KindOf(err) != errdefs.Invalid || !strings.Contains(err.Error(), kc) {
		t.Errorf("status: kind %v, want %v naming %s: %v", errdefs.KindOf(err), errdefs.Invalid, kc, err)
	}
}
