package k8s

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// DriverStatus is one driver pod as Status reports it (its JSON form is an
// element of the status document).
type DriverStatus struct {
	SubmissionID string            `json:"submissionId"`
	Namespace    string            `json:"namespace"`
	Pod          string            `json:"pod"`
	Phase        string            `json:"phase"`
	Reason       string            `json:"reason,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Node         string            `json:"node,omitempty"`
	Created      time.Time         `json:"created"`
	Deleting     bool              `json:"deleting,omitempty"`
	Containers   []ContainerResult `json:"containers,omitempty"`
}

// Status returns the state of the driver pods matching id ("ns:pod",
// "pod", or a glob "ns:prefix*" on pods labelled spark-role=driver) on
// WithMaster's master, as spark-submit --status reads it; the list is
// empty, not nil, when none matches, and the error is then
// errdefs.NotFound. Credentials come from the kubeconfig ($KUBECONFIG,
// context spark.kubernetes.context of WithConf) or the in-cluster service
// account, as spark-submit --status/--kill take them.
// The states are DriverStatus values.
func (b *Backend) Status(ctx context.Context, id string) ([]submit.DriverState, error) {
	ss, err := statusK8s(ctx, id, b.run(nil))
	return states(ss), err
}

// DriverID is the driver's submission ID (namespace:pod).
func (s DriverStatus) DriverID() string { return s.SubmissionID }

// states are ss as submit.DriverStates (nil stays nil: no answer).
func states(ss []DriverStatus) []submit.DriverState {
	if ss == nil {
		return nil
	}
	out := make([]submit.DriverState, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func statusK8s(ctx context.Context, id string, o *options) ([]DriverStatus, error) {
	pods, err := findDrivers(ctx, o.master, id, o)
	if err != nil {
		return nil, err
	}
	out := []DriverStatus{}
	for _, p := range pods {
		out = append(out, driverStatus(p))
	}
	if len(pods) == 0 {
		return out, errdefs.Errorf(errdefs.NotFound, "no driver pod matches %s", id)
	}
	return out, nil
}

// Kill deletes the driver pods matching id, as spark-submit --kill does.
// It returns the pods it tried to delete, in order (empty, not nil, when
// none matched: errdefs.NotFound): Deleting is true for each deleted, and
// when a deletion fails, the last one is the pod that failed. Credentials
// are Status's; WithGracePeriod sets the pods' deletion grace period. The
// states are DriverStatus values.
func (b *Backend) Kill(ctx context.Context, id string) ([]submit.DriverState, error) {
	tried, err := killK8s(ctx, id, b.run(nil))
	return states(tried), err
}

func killK8s(ctx context.Context, id string, o *options) ([]DriverStatus, error) {
	pods, err := findDrivers(ctx, o.master, id, o)
	if err != nil {
		return nil, err
	}
	tried := []DriverStatus{}
	if len(pods) == 0 {
		return tried, errdefs.Errorf(errdefs.NotFound, "no driver pod matches %s", id)
	}
	for _, p := range pods {
		st := driverStatus(p)
		err := o.withAPIRetry(ctx, func() error {
			return o.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: o.gracePeriod})
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return append(tried, st), apiError(fmt.Sprintf("deleting %s/%s", p.Namespace, p.Name), err)
		}
		st.Deleting = true
		tried = append(tried, st)
	}
	return tried, nil
}

// findDrivers resolves id to pods.
func findDrivers(ctx context.Context, master, id string, o *options) ([]corev1.Pod, error) {
	defNS := "default"
	var creds *k8sCreds // nil with a client given (tests)
	if o.client == nil {
		var err error
		if creds, err = o.newCreds(master, o.conf); err != nil {
			return nil, err
		}
		cfg, err := creds.Config()
		if err != nil {
			return nil, errdefs.New(credsKind(err), fmt.Errorf("credentials from %s: %w", creds.Source(), err))
		}
		cfg.Timeout = o.apiCallTimeout
		if o.client, err = kubernetes.NewForConfig(cfg); err != nil {
			// The credentials did not load (a client key or certificate
			// that is not PEM): bad input data, not a usage error.
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("credentials from %s: %w", creds.Source(), err))
		}
		defNS = creds.Namespace()
	}
	ns, name, ok := strings.Cut(id, ":")
	if !ok {
		ns, name = defNS, id
	}
	if name == "" || ns == "" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "submission ID %q: expected namespace:pod or pod (a trailing * globs)", id)
	}
	if prefix, glob := strings.CutSuffix(name, "*"); glob {
		var list *corev1.PodList
		err := o.withAPIRetry(ctx, func() (err error) {
			list, err = o.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "spark-role=driver"})
			return err
		})
		if err != nil {
			return nil, apiError("listing driver pods in "+ns, creds.explainAuth(err))
		}
		var out []corev1.Pod
		for _, p := range list.Items {
			if strings.HasPrefix(p.Name, prefix) {
				out = append(out, p)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	}
	var p *corev1.Pod
	err := o.withAPIRetry(ctx, func() (err error) {
		p, err = o.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apiError("getting "+ns+"/"+name, creds.explainAuth(err))
	}
	return []corev1.Pod{*p}, nil
}

// defaultRetryBackoff is the wait before each retry of a status/kill API call.
func defaultRetryBackoff() []time.Duration {
	return []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
}

// withAPIRetry runs call, retrying 5xx, timeouts and network errors with
// backoff (status and kill are one-shot commands, so the budget is a few
// seconds). Auth, not-found and other 4xx answers are final.
func (o *options) withAPIRetry(ctx context.Context, call func() error) error {
	backoff := o.retryBackoff
	if backoff == nil {
		backoff = defaultRetryBackoff()
	}
	err := call()
	for _, d := range backoff {
		if err == nil || !transientAPIError(err) {
			return err
		}
		if serr := submit.Sleep(ctx, d); serr != nil {
			return err
		}
		err = call()
	}
	return err
}

func transientAPIError(err error) bool {
	if isAuthError(err) || apierrors.IsNotFound(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsInvalid(err) || apierrors.IsConflict(err) || apierrors.IsMethodNotSupported(err) {
		return false
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code := st.Status().Code
		return code >= 500 || code == 429 || code == 0
	}
	return true // connection refused/reset, timeouts
}

// apiError maps an API error to prebake's exit codes.
func apiError(what string, err error) error {
	err = redact.CutError(err) // an API server's message may be megabytes long
	switch {
	case isAuthError(err):
		return errdefs.New(errdefs.Denied, fmt.Errorf("%s: %w", what, err))
	case apierrors.IsNotFound(err):
		return errdefs.New(errdefs.NotFound, fmt.Errorf("%s: %w", what, err))
	}
	return errdefs.New(errdefs.Unavailable, fmt.Errorf("%s: %w", what, err))
}

func driverStatus(p corev1.Pod) DriverStatus {
	return DriverStatus{
		SubmissionID: p.Namespace + ":" + p.Name,
		Namespace:    p.Namespace, Pod: p.Name,
		Phase: string(p.Status.Phase), Reason: redact.Message(p.Status.Reason),
		Labels: p.Labels, Node: p.Spec.NodeName,
		Created:    p.CreationTimestamp.Time,
		Deleting:   p.DeletionTimestamp != nil,
		Containers: containerResults(&p),
	}
}
