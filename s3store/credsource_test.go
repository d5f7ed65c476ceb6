package s3store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
)

// TestCredentialSource: the provider is named, the credentials never are;
// none found is Denied.
func TestCredentialSource(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "")

	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEYID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cretvalue")
	src, err := CredentialSource(context.Background(), 2*time.Second, WithRegion("eu-west-1"))
	if err != nil || src != "EnvConfigCredentials" {
		t.Errorf("env: %q, %v", src, err)
	}
	if strings.Contains(src, "AKIA") || strings.Contains(src, "s3cret") {
		t.Errorf("the source holds the credentials: %q", src)
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	_, err = CredentialSource(context.Background(), 2*time.Second)
	if !errors.Is(err, errdefs.Denied) || !strings.Contains(err.Error(), "no AWS credentials found") {
		t.Errorf("none: %v, want Denied naming the chain", err)
	}

	if src, err := CredentialSource(context.Background(), time.Second, WithStaticCredentials("a", "b")); err != nil || src != "static credentials" {
		t.Errorf("static: %q, %v", src, err)
	}
}
