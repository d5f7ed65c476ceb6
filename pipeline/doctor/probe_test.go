package doctor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/layers/registrytest"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
)

// fakeS3 answers a ListObjectsV2 of bucket "jars" (empty) and NoSuchBucket
// for any other.
func fakeS3(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		if strings.HasPrefix(r.URL.Path, "/jars") && r.URL.Query().Get("list-type") == "2" {
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>jars</Name><KeyCount>0</KeyCount><MaxKeys>1</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>`))
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// denyingRegistry answers every request 401 with a Basic challenge.
func denyingRegistry(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// TestCheckProbes is review 4's MEDIUM 2: what the job needs is probed
// (registry, store, API server, keyring, spark-submit, a settings file),
// each outage is Unreachable (69), each refusal or missing thing a
// problem of its kind, and none stops the other checks.
func TestCheckProbes(t *testing.T) {
	e := newEnv(t)
	s3 := fakeS3(t)
	closed := strings.TrimSuffix(strings.TrimPrefix(closedPort(t), "http://"), "/")
	okReg := registrytest.InProcess(t)
	noKube := func(k *Kube) func(context.Context, time.Duration) (*Kube, error) {
		return func(context.Context, time.Duration) (*Kube, error) { return k, nil }
	}
	storeOpts := []s3store.Option{s3store.WithEndpoint(s3), s3store.WithPathStyle(true), s3store.WithRegion("us-east-1"), s3store.WithStaticCredentials("AKIDTEST", "secretkey1")}
	type outcome struct {
		OK          bool
		Unreachable []string // prefixes
		Problems    []string // prefixes
		Kind        errdefs.Kind
	}
	tests := []struct {
		name string
		edit func(*Input)
		want outcome
	}{
		{"registry answers", func(in *Input) { in.ImageRefs = []string{okReg + "/team/jobs"}; in.BaseImage = okReg + "/spark:3.5.7" },
			outcome{OK: true}},
		{"registry closed", func(in *Input) { in.ImageRefs = []string{closed + "/team/jobs"} },
			outcome{Unreachable: []string{"registry " + closed}, Kind: errdefs.Unavailable}},
		{"registry refuses the credentials", func(in *Input) {
			in.ImageRefs = []string{denyingRegistry(t) + "/team/jobs"}
			in.RegistryOptions = []layers.Option{layers.WithBasicAuth("u", "wrongpass")}
		}, outcome{Problems: []string{"registry 127.0.0.1:"}, Kind: errdefs.Denied}},
		{"store answers", func(in *Input) { in.Store, in.StoreOptions = "s3://jars/team", storeOpts },
			outcome{OK: true}},
		{"no such bucket", func(in *Input) { in.Store, in.StoreOptions = "s3://nobucket/x", storeOpts },
			outcome{Problems: []string{"store s3://nobucket/x"}, Kind: errdefs.NotFound}},
		{"store endpoint closed", func(in *Input) {
			in.Store = "s3://jars/x"
			in.StoreOptions = []s3store.Option{s3store.WithEndpoint("http://" + closed), s3store.WithPathStyle(true), s3store.WithRegion("us-east-1"), s3store.WithStaticCredentials("AKIDTEST", "secretkey1")}
		}, outcome{Unreachable: []string{"store s3://jars/x"}, Kind: errdefs.Unavailable}},
		{"API server closed", func(in *Input) {
			in.Kube = noKube(&Kube{APIServer: "https://" + closed, Error: "connection refused", Access: []string{}, Denied: []string{}})
		}, outcome{Unreachable: []string{"API server https://" + closed}, Kind: errdefs.Unavailable}},
		{"API server denies", func(in *Input) {
			in.Kube = noKube(&Kube{APIServer: "https://k8s.test", Reachable: true, Namespace: "jobs", Access: []string{"create pods", "create services"}, Denied: []string{"create services"}})
		}, outcome{Problems: []string{"API server https://k8s.test: the credentials () may not create services"}, Kind: errdefs.Denied}},
		{"API server refuses the credentials (401)", func(in *Input) {
			in.Kube = noKube(&Kube{APIServer: "https://k8s.test", Reachable: true, Error: "Unauthorized", Kind: errdefs.Denied, Access: []string{}, Denied: []string{}})
		}, outcome{Problems: []string{"API server https://k8s.test: Unauthorized"}, Kind: errdefs.Denied}},
		{"bad kubeconfig", func(in *Input) {
			in.Kube = noKube(&Kube{APIServer: "https://k8s.test", Error: "credentials from kubeconfig: bad key", Kind: errdefs.Invalid, Access: []string{}, Denied: []string{}})
		}, outcome{Problems: []string{"API server https://k8s.test: credentials from"}, Kind: errdefs.Invalid}},
		{"access review times out", func(in *Input) {
			in.Kube = noKube(&Kube{APIServer: "https://k8s.test", Reachable: true, Error: "access review of create pods: timeout", Kind: errdefs.Unavailable, Access: []string{}, Denied: []string{}})
		}, outcome{Unreachable: []string{"API server https://k8s.test"}, Kind: errdefs.Unavailable}},
		{"API server grants", func(in *Input) {
			in.Kube = noKube(&Kube{APIServer: "https://k8s.test", Reachable: true, Access: []string{"create pods"}, Denied: []string{}})
		}, outcome{OK: true}},
		{"no keyring", func(in *Input) { in.Keyring = filepath.Join(t.TempDir(), "prebake-keyring.asc") },
			outcome{Problems: []string{"signature keyring "}, Kind: errdefs.NotFound}},
		{"no spark-submit, needed", func(in *Input) {
			in.SparkSubmit, in.SparkSubmitNeeded = filepath.Join(t.TempDir(), "spark-submit"), true
		},
			outcome{Problems: []string{"spark-submit "}, Kind: errdefs.NotFound}},
		{"no spark-submit, not needed: a warning", func(in *Input) { in.SparkSubmit = filepath.Join(t.TempDir(), "spark-submit") },
			outcome{OK: true}},
		{"missing settings file", func(in *Input) { in.Resolve.Settings = filepath.Join(t.TempDir(), "settings.xml") },
			outcome{Problems: []string{"repository chain: "}, Kind: errdefs.NotFound}},
		{"everything at once: all reported", func(in *Input) {
			in.ImageRefs = []string{closed + "/team/jobs"}
			in.Store, in.StoreOptions = "s3://nobucket/x", storeOpts
			in.Keyring = filepath.Join(t.TempDir(), "k.asc")
		}, outcome{Unreachable: []string{"registry " + closed}, Problems: []string{"store s3://nobucket/x", "signature keyring "}, Kind: errdefs.Unavailable}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := e.input()
			in.Resolve = resolver.Request{NoDefaultRepositories: true, Repositories: []string{e.ok}, Home: e.home}
			in.ImageRefs, in.NoPing = nil, false
			tc.edit(&in)
			r, err := Check(context.Background(), in, WithTimeout(3*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			prefixes := func(got, want []string) []string {
				out := []string{}
				for i, g := range got {
					if i < len(want) && strings.HasPrefix(g, want[i]) {
						g = want[i]
					}
					out = append(out, g)
				}
				return out
			}
			want := tc.want
			if want.Unreachable == nil {
				want.Unreachable = []string{}
			}
			if want.Problems == nil {
				want.Problems = []string{}
			}
			got := outcome{OK: r.OK, Unreachable: prefixes(r.Unreachable, want.Unreachable), Problems: prefixes(r.Problems, want.Problems), Kind: errdefs.KindOf(r.Err())}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nunreachable %q\nproblems %q\nwarnings %q", diff, r.Unreachable, r.Problems, r.Warnings)
			}
			if all := strings.Join(append(append(r.Unreachable, r.Problems...), r.Warnings...), " "); strings.Contains(all, "wrongpass") || strings.Contains(all, "secretkey1") {
				t.Errorf("a credential in the report: %s", all)
			}
		})
	}
}
