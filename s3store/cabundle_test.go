package s3store

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCABundle: an https endpoint whose CA is in AWS_CA_BUNDLE (a private
// CA: MinIO, versitygw, a company's S3) is trusted, as by the AWS CLI and
// SDKs. Found by the https store journey on the real node
// (test/spark TestK8sJourneyStore): the bundle was loaded into the AWS
// configuration's client, which the store then replaced by its own.
func TestCABundle(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	for _, tc := range []struct {
		name, bundle string
		wantTLSError bool
	}{
		{"AWS_CA_BUNDLE trusted", bundle, false},
		{"no bundle", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_CA_BUNDLE", tc.bundle)
			hits.Store(0)
			st, err := Open(context.Background(), "s3://bkt/pfx", WithEndpoint(srv.URL), WithPathStyle(true), WithRegion("us-east-1"),
				WithStaticCredentials("AKIAEXAMPLE", "secret"), WithRetry(1, 10*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.Manifest(context.Background(), strings.Repeat("a", 64))
			if err == nil {
				t.Fatal("Manifest from a 404 server: no error")
			}
			tlsErr := strings.Contains(err.Error(), "certificate")
			if tlsErr != tc.wantTLSError || (hits.Load() > 0) == tc.wantTLSError {
				t.Errorf("TLS error %v (want %v), %d requests answered: %v", tlsErr, tc.wantTLSError, hits.Load(), err)
			}
		})
	}
}
