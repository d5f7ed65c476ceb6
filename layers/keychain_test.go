package layers

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
)

// hostKeychain is a registry helper that knows one registry's credentials
// (as an ECR or GCR keychain knows its cloud's).
type hostKeychain struct {
	host, user, password string
	asked                *int
}

func (k hostKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	*k.asked++
	if r.RegistryStr() != k.host {
		return authn.Anonymous, nil
	}
	return &authn.Basic{Username: k.user, Password: k.password}, nil
}

// TestWithKeychain bakes into a registry that requires basic auth: without
// credentials the push is denied (errdefs.Denied), with a keychain that knows
// the registry composed after one that does not, it succeeds.
func TestWithKeychain(t *testing.T) {
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ci" || p != "kc-s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	lf, paths := makeLock(t, t.TempDir(), demoArtifacts[:1]...)
	in := BakeInput{Lock: lf, Jars: lock.LocalJars(paths), Base: "oci:" + baseImageDir + ":" + baseImageAmd64Tag, Target: host + "/jobs"}
	ctx := context.Background()

	var none int
	_, err := Bake(ctx, in, WithKeychain(hostKeychain{host: "elsewhere.invalid", asked: &none}))
	if !errors.Is(err, errdefs.Denied) {
		t.Fatalf("without the registry's credentials: %v, want kind Denied", err)
	}
	var asked int
	res, err := Bake(ctx, in, WithKeychain(hostKeychain{host: "elsewhere.invalid", asked: &asked}, hostKeychain{host: host, user: "ci", password: "kc-s3cret", asked: &asked}))
	if err != nil {
		t.Fatalf("with a keychain that knows %s: %v", host, err)
	}
	if asked == 0 || !strings.HasPrefix(res.Ref, host+"/jobs") {
		t.Errorf("ref %s, keychains asked %d times", res.Ref, asked)
	}
}
