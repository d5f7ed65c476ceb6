package cmd

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit/rest"
)

// restBackend submits to spark:// (standalone cluster mode) and mesos://
// masters through Spark's REST submission protocol and polls to the end.
type restBackend struct {
	restPort      int
	clientVersion string
	masterUI      string
}

func (b *restBackend) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&b.restPort, "rest-port", 0, "REST port on every spark:// or mesos:// master host (default: 6066 when the URL has the RPC port 7077 or none, else the URL's port)")
	fs.StringVar(&b.clientVersion, "rest-client-version", rest.DefaultClientSparkVersion, "clientSparkVersion sent to the master; before 4.0 MESOS_* variables are sent too")
	fs.StringVar(&b.masterUI, "master-ui", "", "standalone: the master's web UI (http://host:port; default port 8080 of each master host), through which a failed driver's stderr is fetched from its worker")
}

func (b *restBackend) options(stderr io.Writer, quiet bool, port int) []rest.Option {
	log := stderr
	if quiet {
		log = io.Discard
	}
	return []rest.Option{rest.WithLog(log), rest.WithPort(port), rest.WithClientSparkVersion(b.clientVersion), rest.WithMasterUI(b.masterUI)}
}

func (b *restBackend) Submit(ctx context.Context, req *submitRequest) error {
	opts := append(b.options(req.Stderr, req.Quiet, b.restPort),
		rest.WithPollInterval(req.Flags.pollInterval),
		rest.WithTimeout(req.Flags.timeout),
		rest.WithKillOnCancel(req.Flags.killOnCancel))
	out, err := rest.Backend{Options: opts, AttachID: req.Flags.pollOnly, Master: req.Master}.Submit(ctx, req.Sub)
	return render(req.Output, out, err, req.Stdout, req.Stderr)
}

// Attach polls only (submit --status-poll-only: rest.Backend's AttachID).
func (b *restBackend) Attach(ctx context.Context, req *submitRequest) error {
	return b.Submit(ctx, req)
}

// idPort returns --rest-port when the status/kill command has one.
func idPort(req *idRequest) int {
	if req.Flags == nil {
		return 0
	}
	if f := req.Flags.Lookup("rest-port"); f != nil {
		p, _ := strconv.Atoi(f.Value.String())
		return p
	}
	return 0
}

// restStatusJSON is `prebake status -o json` for spark:// and mesos://:
// {"submissionId", "master", "restUrl", "state", "workerId",
// "workerHostPort", "message", "serverSparkVersion"} (empty ones omitted).
type restStatusJSON struct {
	SubmissionID       string `json:"submissionId"`
	Master             string `json:"master"`
	RestURL            string `json:"restUrl,omitempty"`
	State              string `json:"state,omitempty"`
	WorkerID           string `json:"workerId,omitempty"`
	WorkerHostPort     string `json:"workerHostPort,omitempty"`
	Message            string `json:"message,omitempty"`
	ServerSparkVersion string `json:"serverSparkVersion,omitempty"`
}

func (b *restBackend) printID(req *idRequest, r *rest.Response) error {
	if r == nil {
		return nil
	}
	if req.Output == outJSON {
		return printJSON(req.Stdout, restStatusJSON{SubmissionID: req.ID, Master: redact.URL(req.Master), RestURL: r.Master, State: r.DriverState,
			WorkerID: r.WorkerID, WorkerHostPort: r.WorkerHostPort, Message: r.Message, ServerSparkVersion: r.ServerSparkVersion})
	}
	if r.DriverState == "" && r.WorkerID == "" {
		// Nothing known of id (unknown or finished): only the message, on stderr.
		if r.Message != "" {
			fmt.Fprintln(req.Stderr, r.Message)
		}
		return nil
	}
	line := req.ID
	if r.DriverState != "" {
		line += " " + r.DriverState
	}
	if r.WorkerID != "" {
		line += " " + r.WorkerID
	}
	if r.WorkerHostPort != "" {
		line += " " + r.WorkerHostPort
	}
	fmt.Fprintln(req.Stdout, line)
	if r.Message != "" {
		fmt.Fprintln(req.Stderr, r.Message)
	}
	return nil
}

func (b *restBackend) Status(ctx context.Context, req *idRequest) error {
	r, err := rest.Status(ctx, req.Master, req.ID, b.options(req.Stderr, false, idPort(req))...)
	if perr := b.printID(req, r); perr != nil {
		return perr
	}
	return err
}

func (b *restBackend) Kill(ctx context.Context, req *idRequest) error {
	r, err := rest.Kill(ctx, req.Master, req.ID, b.options(req.Stderr, false, idPort(req))...)
	if err == nil && r != nil && req.Output != outJSON {
		fmt.Fprintln(req.Stdout, r.Message)
		return nil
	}
	if perr := b.printID(req, r); perr != nil {
		return perr
	}
	return err
}
