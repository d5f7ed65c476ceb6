package k8s

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// Need is one API permission a submission needs: verb on resource
// (a core resource: pods, services, configmaps).
type Need struct {
	Verb     string `json:"verb"`
	Resource string `json:"resource"`
}

// SubmitNeeds is what spark-submit (and the native submitter) creates and
// then patches in the namespace: the driver pod, its headless service
// and its configmaps (owner references are patched on), and the pod it
// watches and deletes.
var SubmitNeeds = []Need{
	{"create", "pods"}, {"get", "pods"}, {"watch", "pods"}, {"delete", "pods"},
	{"create", "services"}, {"patch", "services"},
	{"create", "configmaps"}, {"patch", "configmaps"},
}

// Access is one SelfSubjectAccessReview's answer.
type Access struct {
	Need
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason,omitempty"`
}

// Probe is what the API server of a k8s:// master answered.
type Probe struct {
	// APIServer is its URL; Source says where the credentials came from
	// (never their values); Namespace is the one checked.
	APIServer string `json:"apiServer"`
	Source    string `json:"source,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Reachable is true when GET /version answered (Version).
	Reachable bool     `json:"reachable"`
	Version   string   `json:"version,omitempty"`
	Access    []Access `json:"access"`
	// Error says why the probe stopped (credentials, no answer);
	// Warning is what to know (plain HTTP to the API server).
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
	// Kind is what kind of failure Error is: errdefs.Invalid (the
	// credentials cannot be loaded), errdefs.Unavailable (no answer, a
	// timeout) or errdefs.Denied (the server refused them: 401/403).
	Kind errdefs.Kind `json:"-"`
}

// fail records why the probe stopped.
func (p *Probe) fail(k errdefs.Kind, msg string) {
	p.Kind, p.Error = k, redact.Line(redact.Cut(msg, redact.MaxMessage))
}

// refused tells whether err is the API server refusing the credentials.
func refused(err error) bool {
	return apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err)
}

// reviewKind is what kind of failure a SelfSubjectAccessReview's err is:
// no answer (a network error, a timeout, an overloaded server) is
// Unavailable, any other answer Denied.
func reviewKind(err error) errdefs.Kind {
	var st apierrors.APIStatus
	switch {
	case refused(err):
		return errdefs.Denied
	case !errors.As(err, &st), apierrors.IsTimeout(err), apierrors.IsServerTimeout(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsTooManyRequests(err), apierrors.IsInternalError(err):
		return errdefs.Unavailable
	}
	return errdefs.Denied
}

// ProbeAPIServer checks the API server of master (k8s://…) with the
// credentials a submission with conf would use (Spark's submission keys,
// spark.kubernetes.context, $KUBECONFIG, the in-cluster service account):
// that it answers GET /version, then one SelfSubjectAccessReview per need
// in the namespace (spark.kubernetes.namespace, else the credentials').
// Every request is bounded by timeout; nothing is created. Only a bad
// master and a cancelled ctx are errors: what failed is in the Probe
// (Error, of Kind).
func ProbeAPIServer(ctx context.Context, master string, conf map[string]string, needs []Need, timeout time.Duration) (*Probe, error) {
	c, err := newK8sCreds(master, conf, os.Getenv, "")
	if err != nil {
		return nil, err
	}
	p := &Probe{APIServer: redact.URL(c.host), Source: c.Source(), Namespace: conf["spark.kubernetes.namespace"], Access: []Access{}}
	if p.Namespace == "" {
		p.Namespace = c.Namespace()
	}
	p.Warning = c.plainHTTPWarning()
	cfg, err := c.Config()
	if err != nil {
		p.fail(errdefs.Invalid, fmt.Sprintf("credentials from %s: %v", c.Source(), err))
		return p, nil
	}
	cfg.Timeout = timeout
	// JSON both ways: a probe's few small objects (and any fake API server
	// reads them).
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		p.fail(errdefs.Invalid, err.Error())
		return p, nil
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err == nil {
		var v version.Info
		if err = json.Unmarshal(body, &v); err != nil {
			err = fmt.Errorf("unable to parse the server version: %w", err)
		}
		p.Version = redact.Message(v.GitVersion)
	}
	switch {
	case ctx.Err() != nil:
		return p, ctx.Err()
	case err != nil && refused(err):
		// It answered: the credentials are refused.
		p.Reachable = true
		p.fail(errdefs.Denied, err.Error())
		return p, nil
	case err != nil:
		p.fail(errdefs.Unavailable, err.Error())
		return p, nil
	}
	p.Reachable = true
	for _, n := range needs {
		r := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authv1.ResourceAttributes{Namespace: p.Namespace, Verb: n.Verb, Resource: n.Resource}}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return p, ctx.Err()
			}
			p.fail(reviewKind(err), fmt.Sprintf("access review of %s %s: %v", n.Verb, n.Resource, err))
			return p, nil
		}
		a := Access{Need: n, Allowed: got.Status.Allowed, Reason: got.Status.Reason}
		if got.Status.Denied {
			a.Allowed = false
		}
		p.Access = append(p.Access, a)
	}
	return p, ctx.Err()
}
