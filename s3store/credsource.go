package s3store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"

	"github.com/prebake/prebake/errdefs"
)

// CredentialSource returns where the AWS credential chain (with opts'
// region and static credentials) finds its credentials, as the SDK names
// the provider ("EnvConfigCredentials", "SharedConfigCredentials:
// ~/.aws/credentials", "WebIdentityCredentials", "EC2RoleProvider", …),
// within timeout. It never returns the credentials. None found is an error
// of kind Denied.
func CredentialSource(ctx context.Context, timeout time.Duration, opts ...Option) (string, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return "", err
	}
	if o.accessKey != "" {
		return "static credentials", nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	load := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{})}
	if o.region != "" {
		load = append(load, config.WithRegion(o.region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return "", errdefs.Errorf(errdefs.BadArgument, "loading the AWS configuration: %v", err)
	}
	if cfg.Credentials == nil {
		return "", errdefs.Errorf(errdefs.Denied, "no AWS credentials found (env AWS_ACCESS_KEY_ID, a profile, or web identity)")
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return "", errdefs.Errorf(errdefs.Timeout, "no AWS credentials found within %s (env AWS_ACCESS_KEY_ID, a profile, web identity or instance metadata)", timeout)
		}
		return "", errdefs.Errorf(errdefs.Denied, "no AWS credentials found (env AWS_ACCESS_KEY_ID, a profile, or web identity): %s", firstLine(err.Error()))
	}
	src := creds.Source
	if src == "" {
		src = "the AWS credential chain"
	}
	if creds.CanExpire {
		src += fmt.Sprintf(" (expires %s)", creds.Expires.UTC().Format(time.RFC3339))
	}
	return src, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
