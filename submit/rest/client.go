package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// Errors of the REST client, checked with errors.Is.
var (
	// ErrUnavailable: no master answered with the REST protocol.
	ErrUnavailable = errors.New("no REST submission server answered")
	// ErrNoAliveMaster: every master that answered is a standby.
	ErrNoAliveMaster = errors.New("no ALIVE master")
	// ErrProtocolVersion: the server answered 468 (unknown protocol version).
	ErrProtocolVersion = errors.New("REST protocol version not supported by the server")
	// ErrRejected: the server answered 400 with an ErrorResponse.
	ErrRejected = errors.New("the master rejected the request")
	// ErrSubmissionNotFound: status or kill of an id the master does not know.
	ErrSubmissionNotFound = errors.New("submission not found")
	// ErrMaybeSubmitted: the create request was sent but its answer was lost.
	ErrMaybeSubmitted = errors.New("the submission may have been accepted")
)

// DefaultPort is spark.master.rest.port.
const DefaultPort = 6066

// Option configures the REST client.
type Option func(*options) error

type options struct {
	restPort      int
	httpClient    *http.Client
	clientVersion string
	log           io.Writer
	pollInterval  time.Duration
	timeout       time.Duration
	killOnCancel  bool
	retries       int
	backoff       time.Duration
	maxBackoff    time.Duration
	maxPollErrors int
	now           func() time.Time
	masterUI      string
}

// makeOptions applies opts over the defaults and checks them.
func makeOptions(opts []Option) (*options, error) {
	o := &options{
		httpClient:    &http.Client{Timeout: 30 * time.Second},
		clientVersion: DefaultClientSparkVersion,
		log:           io.Discard,
		pollInterval:  10 * time.Second,
		killOnCancel:  true,
		retries:       4,
		backoff:       time.Second,
		maxBackoff:    30 * time.Second,
		maxPollErrors: 10,
		now:           time.Now,
	}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.timeout < 0 {
		return nil, errdefs.Optionf(errdefs.BadArgument, "rest.WithTimeout", "time limit %s: negative", o.timeout)
	}
	return o, nil
}

// WithPort sets the port of the REST server on every spark:// or
// mesos:// master host. The default is the port in the master URL unless it
// is the RPC port 7077 (or absent) on a spark:// master: then 6066
// (spark.master.rest.port). Mesos dispatchers serve REST on their own port
// (default 7077).
func WithPort(port int) Option {
	return func(o *options) error { o.restPort = port; return nil }
}

// WithHTTPClient sets the HTTP client. The default has a 30 s timeout.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) error { o.httpClient = c; return nil }
}

// WithClientSparkVersion sets clientSparkVersion (default
// DefaultClientSparkVersion). Versions before 4.0 also send MESOS_* variables.
func WithClientSparkVersion(v string) Option {
	return func(o *options) error {
		if v != "" {
			o.clientVersion = v
		}
		return nil
	}
}

// WithLog sets where transitions, retries and warnings are written
// (stderr). The default discards them.
func WithLog(w io.Writer) Option {
	return func(o *options) error {
		if w != nil {
			o.log = w
		}
		return nil
	}
}

// WithPollInterval sets how often the status is polled (±10% jitter). The
// default is 10 s.
func WithPollInterval(d time.Duration) Option {
	return func(o *options) error {
		if d > 0 {
			o.pollInterval = d
		}
		return nil
	}
}

// WithTimeout bounds the whole run (errdefs.Timeout). The default is none.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error { o.timeout = d; return nil }
}

// WithKillOnCancel says whether a cancelled context (SIGINT/SIGTERM) kills
// the driver. The default is true.
func WithKillOnCancel(b bool) Option {
	return func(o *options) error { o.killOnCancel = b; return nil }
}

// WithRetry sets how many rounds over the masters a request makes on network
// errors, and the first backoff (doubled each round, capped at 30 s). The
// default is 4 rounds from 1 s. During polling, maxPollErrors consecutive
// failed polls end the run (errdefs.Unavailable); the default is 10.
func WithRetry(rounds int, backoff time.Duration, maxPollErrors int) Option {
	return func(o *options) error {
		o.retries, o.backoff, o.maxPollErrors = max(rounds, 1), backoff, max(maxPollErrors, 1)
		return nil
	}
}

// Client speaks Spark's REST submission protocol (v1) to the standalone
// masters or the Mesos dispatcher of one master URL, trying each in turn.
type Client struct {
	master string   // the master URL as given
	urls   []string // http://host:port, one per master
	mesos  bool
	leader int // index of the master that answered last
	o      *options
}

// NewClient parses master (spark://h1[:port][,h2[:port]…] or
// mesos://host[:port]).
func NewClient(master string, opts ...Option) (*Client, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	urls, mesos, err := restURLs(master, o.restPort)
	if err != nil {
		return nil, errdefs.New(errdefs.BadArgument, err)
	}
	return &Client{master: master, urls: urls, mesos: mesos, o: o}, nil
}

// restURLs returns the REST base URLs of a master URL.
func restURLs(master string, restPort int) ([]string, bool, error) {
	var rest string
	mesos := false
	switch {
	case strings.HasPrefix(master, "spark://"):
		rest = strings.TrimPrefix(master, "spark://")
	case strings.HasPrefix(master, "mesos://"):
		rest, mesos = strings.TrimPrefix(master, "mesos://"), true
		if strings.HasPrefix(rest, "zk://") {
			return nil, false, fmt.Errorf("master %s: REST needs the Mesos cluster dispatcher's URL (mesos://dispatcher:7077), not ZooKeeper", redact.URL(master))
		}
	default:
		return nil, false, fmt.Errorf("master %s: the REST protocol needs a spark:// or mesos:// master", redact.URL(master))
	}
	rest = strings.TrimSuffix(rest, "/")
	var urls []string
	for _, hp := range strings.Split(rest, ",") {
		hp = strings.TrimSpace(hp)
		if i := strings.LastIndexByte(hp, '@'); i >= 0 {
			hp = hp[i+1:] // no credentials in a master URL
		}
		host, port := hp, ""
		if h, p, err := net.SplitHostPort(hp); err == nil {
			host, port = h, p
		}
		host = strings.Trim(host, "[]")
		if host == "" {
			return nil, false, fmt.Errorf("master %s: empty host", redact.URL(master))
		}
		if port != "" {
			if _, err := strconv.Atoi(port); err != nil {
				return nil, false, fmt.Errorf("master %s: bad port %q", redact.URL(master), port)
			}
		}
		switch {
		case restPort > 0:
			port = strconv.Itoa(restPort)
		case mesos && port == "":
			port = "7077"
		case !mesos && (port == "" || port == "7077"):
			port = strconv.Itoa(DefaultPort)
		}
		urls = append(urls, "http://"+net.JoinHostPort(host, port))
	}
	return urls, mesos, nil
}

// Masters returns the REST URLs tried, in order.
func (c *Client) Masters() []string { return append([]string(nil), c.urls...) }

// failure kinds of one request to one master.
const (
	restFailRefused = iota // nothing listens: the request was not sent
	restFailNotREST        // something answered, but not the REST protocol
	restFailStandby        // a standby (or not ready) master
	restFailNetwork        // the connection broke; the request may have been handled
	restFailServer         // 5xx
)

type restFailure struct {
	url  string
	kind int
	err  error
}

// restDefinitiveError is a 400 or 468: another master or round will not help.
type restDefinitiveError struct{ err error }

func (e *restDefinitiveError) Error() string { return e.err.Error() }
func (e *restDefinitiveError) Unwrap() error { return e.err }

// maxAnswerSize bounds an answer of the REST server.
const maxAnswerSize = 4 << 20

// once sends one request to one master.
func (c *Client) once(ctx context.Context, base, method, path string, body []byte) (*Response, *restFailure, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+"/"+ProtocolVersion+"/submissions/"+path, rd)
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("charset", "utf-8")
	}
	resp, err := c.o.httpClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		kind := restFailNetwork
		switch {
		case errors.Is(err, syscall.ECONNREFUSED) || restIsDialError(err):
			kind = restFailRefused
		case strings.Contains(err.Error(), "malformed HTTP"), strings.Contains(err.Error(), "readLoopPeekFailLocked"):
			// Not an HTTP server (e.g. the RPC port): no REST server got it.
			kind = restFailNotREST
		}
		return nil, &restFailure{url: base, kind: kind, err: err}, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerSize+1))
	if err != nil {
		return nil, &restFailure{url: base, kind: restFailNetwork, err: fmt.Errorf("reading the answer: %w", err)}, nil
	}
	if len(data) > maxAnswerSize {
		// A REST answer is a few hundred bytes: this is no Spark master.
		return nil, nil, &restDefinitiveError{errdefs.Errorf(errdefs.Invalid, "%s (HTTP %d): answer larger than %d bytes", base, resp.StatusCode, maxAnswerSize)}
	}
	r, perr := parseRestResponse(data)
	switch {
	case resp.StatusCode == 468:
		v := "an unknown version"
		if r != nil && r.HighestProtocolVersion != "" {
			v = r.HighestProtocolVersion
		}
		return nil, nil, &restDefinitiveError{errdefs.New(errdefs.Unavailable, fmt.Errorf("%w: %s answered HTTP 468 to protocol %s (it speaks %s): %s",
			ErrProtocolVersion, base, ProtocolVersion, v, restFirstLines(restMsgOf(r, data))))}
	case perr != nil && resp.StatusCode >= 500:
		return nil, &restFailure{url: base, kind: restFailServer, err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, restFirstLines(string(data)))}, nil
	case perr != nil:
		return nil, &restFailure{url: base, kind: restFailNotREST, err: fmt.Errorf("HTTP %d, %v", resp.StatusCode, perr)}, nil
	case r.Action == "ErrorResponse" && resp.StatusCode >= 500:
		return nil, &restFailure{url: base, kind: restFailServer, err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, restFirstLines(r.Message))}, nil
	case r.Action == "ErrorResponse":
		return nil, nil, &restDefinitiveError{errdefs.New(errdefs.Invalid, fmt.Errorf("%w (%s, HTTP %d): %s", ErrRejected, base, resp.StatusCode, restFirstLines(r.Message)))}
	}
	r.HTTPStatus, r.Master = resp.StatusCode, base
	if !r.OK() && (strings.Contains(r.Message, "Current state is not alive") || strings.Contains(r.Message, "Scheduler is not ready")) {
		return nil, &restFailure{url: base, kind: restFailStandby, err: errors.New(restFirstLines(strings.TrimPrefix(r.Message, "Exception from the cluster:\n")))}, nil
	}
	return r, nil, nil
}

func restIsDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func restMsgOf(r *Response, raw []byte) string {
	if r != nil {
		return r.Message
	}
	return string(raw)
}

func restOrUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// restFirstLines drops Java stack frames ("\tat …") and keeps a message short.
func restFirstLines(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "at ") || strings.HasPrefix(l, "\t") {
			continue
		}
		keep = append(keep, strings.TrimSpace(l))
	}
	return redact.Line(redact.Cut(strings.Join(keep, " "), redact.MaxMessage))
}

// round tries each master once, from the one that answered last.
func (c *Client) round(ctx context.Context, method, path string, body []byte) (*Response, []restFailure, error) {
	var fails []restFailure
	for k := range c.urls {
		i := (c.leader + k) % len(c.urls)
		r, f, err := c.once(ctx, c.urls[i], method, path, body)
		if err != nil {
			return nil, fails, err
		}
		if f != nil {
			fails = append(fails, *f)
			continue
		}
		c.leader = i
		return r, nil, nil
	}
	return nil, fails, nil
}

// call makes rounds over the masters with backoff until one answers.
// Without safeToRepeat, it stops once a request may have reached a server.
func (c *Client) call(ctx context.Context, method, path string, body []byte, safeToRepeat bool) (*Response, error) {
	var fails []restFailure
	for attempt := 1; ; attempt++ {
		r, f, err := c.round(ctx, method, path, body)
		if err != nil || r != nil {
			return r, err
		}
		fails = f
		if allNotREST(f) {
			// Every master answered, but not as a REST server (an HTML
			// page, the RPC port): asking again gives the same answer.
			break
		}
		if !safeToRepeat {
			for _, x := range f {
				if x.kind == restFailNetwork || x.kind == restFailServer {
					return nil, errdefs.New(errdefs.Unavailable, &errdefs.OptionError{Option: "rest.WithPort", Err: fmt.Errorf("%w: the connection to %s broke after the request was sent (%v); check the master UI before submitting again (if %s is not the REST port, e.g. the RPC port 7077, give the REST port; the REST server needs spark.master.rest.enabled=true)", ErrMaybeSubmitted, x.url, restRedactErr(x.err), x.url)})
				}
			}
		}
		if attempt >= c.o.retries {
			break
		}
		d := c.backoffFor(attempt)
		fmt.Fprintf(c.o.log, "prebake: %s; retrying in %s (%d/%d)\n", restDescribeFailures(f), d.Round(time.Millisecond), attempt, c.o.retries-1)
		if err := submit.Sleep(ctx, d); err != nil {
			return nil, err
		}
	}
	return nil, c.failuresError(fails, c.o.retries)
}

// allNotREST reports whether every failure is an answer that is not the
// REST protocol.
func allNotREST(fs []restFailure) bool {
	for _, f := range fs {
		if f.kind != restFailNotREST {
			return false
		}
	}
	return len(fs) > 0
}

func (c *Client) backoffFor(attempt int) time.Duration {
	d := c.o.backoff
	for i := 1; i < attempt && d < c.o.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.o.maxBackoff)
	// ±20% jitter
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func restRedactErr(err error) string { return redact.String(err.Error()) }

func restDescribeFailures(fs []restFailure) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s: %s", f.url, restRedactErr(f.err)))
	}
	return strings.Join(parts, "; ")
}

// failuresError explains why no master answered.
func (c *Client) failuresError(fs []restFailure, rounds int) error {
	standby, noREST := 0, 0
	for _, f := range fs {
		switch f.kind {
		case restFailStandby:
			standby++
		case restFailRefused, restFailNotREST:
			noREST++
		}
	}
	switch {
	case noREST == len(fs):
		fix := "enable it on the master with spark.master.rest.enabled=true (off by default before Spark 4.1; the REST server listens on spark.master.rest.port, 6066)"
		if c.mesos {
			fix = "check that the Mesos cluster dispatcher runs and listens there (mesos://dispatcher:7077)"
		}
		return errdefs.New(errdefs.Unavailable, &errdefs.OptionError{Option: "rest.WithPort", Err: fmt.Errorf("%w on %s (%s): %s, or give its port if it listens elsewhere",
			ErrUnavailable, redact.URL(c.master), restDescribeFailures(fs), fix)})
	case standby > 0 && standby+noREST == len(fs):
		return errdefs.New(errdefs.Unavailable, fmt.Errorf("%w among %s: %s", ErrNoAliveMaster, redact.URL(c.master), restDescribeFailures(fs)))
	}
	return errdefs.New(errdefs.Unavailable, fmt.Errorf("master %s unavailable (%d round(s) over its masters): %s", redact.URL(c.master), rounds, restDescribeFailures(fs)))
}

// Create posts req to /v1/submissions/create. A refused connection or a
// standby moves on to the next master; a request that may have been handled
// is not repeated. A success:false answer is an error with its message.
func (c *Client) Create(ctx context.Context, req *CreateSubmissionRequest) (*Response, error) {
	body, err := req.JSON()
	if err != nil {
		return nil, errdefs.New(errdefs.BadArgument, err)
	}
	r, err := c.call(ctx, http.MethodPost, "create", body, false)
	if err != nil {
		return nil, err
	}
	if r.Action != "CreateSubmissionResponse" {
		return nil, errdefs.Errorf(errdefs.Unavailable, "%s answered create with %s", r.Master, redact.Message(r.Action))
	}
	if len(r.UnknownFields) > 0 {
		fmt.Fprintf(c.o.log, "prebake: the master ignored unknown fields %s\n", strings.Join(r.UnknownFields, ", "))
	}
	if !r.OK() || r.SubmissionID == "" {
		return r, errdefs.Errorf(errdefs.Unavailable, "%s refused the submission: %s", r.Master, restOrUnknown(restFirstLines(r.Message)))
	}
	return r, nil
}

// Status gets /v1/submissions/status/{id} with retries. An unknown id is a
// response with success false, not an error.
func (c *Client) Status(ctx context.Context, id string) (*Response, error) {
	return c.call(ctx, http.MethodGet, "status/"+id, nil, true)
}

// statusRound is one status round over the masters, without retries.
func (c *Client) statusRound(ctx context.Context, id string) (*Response, error) {
	r, fails, err := c.round(ctx, http.MethodGet, "status/"+id, nil)
	if err != nil || r != nil {
		return r, err
	}
	return nil, c.failuresError(fails, 1)
}

// Kill posts /v1/submissions/kill/{id}. success:false (finished or unknown
// id) is an errdefs.NotFound error.
func (c *Client) Kill(ctx context.Context, id string) (*Response, error) {
	r, err := c.call(ctx, http.MethodPost, "kill/"+id, nil, true)
	if err != nil {
		return nil, err
	}
	if !r.OK() {
		return r, errdefs.New(errdefs.NotFound, fmt.Errorf("%w: kill %s: %s", ErrSubmissionNotFound, id, restOrUnknown(restFirstLines(r.Message))))
	}
	return r, nil
}
