package k8s

import (
	"context"
	"fmt"
	"os"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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
}

// ProbeAPIServer checks the API server of master (k8s://…) with the
// credentials a submission with conf would use (Spark's submission keys,
// spark.kubernetes.context, $KUBECONFIG, the in-cluster service account):
// that it answers GET /version, then one SelfSubjectAccessReview per need
// in the namespace (spark.kubernetes.namespace, else the credentials').
// Every request is bounded by timeout; nothing is created. Only a bad
// master is an error: what failed is in the Probe.
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
		p.Error = redact.Line(fmt.Sprintf("credentials from %s: %v", c.Source(), err))
		return p, nil
	}
	cfg.Timeout = timeout
	// JSON both ways: a probe's few small objects (and any fake API server
	// reads them).
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		p.Error = redact.Line(err.Error())
		return p, nil
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		p.Error = redact.Line(redact.Cut(err.Error(), redact.MaxMessage))
		return p, nil
	}
	p.Reachable, p.Version = true, v.GitVersion
	for _, n := range needs {
		r := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authv1.ResourceAttributes{Namespace: p.Namespace, Verb: n.Verb, Resource: n.Resource}}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
		if err != nil {
			p.Error = redact.Line(redact.Cut(fmt.Sprintf("access review of %s %s: %v", n.Verb, n.Resource, err), redact.MaxMessage))
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
