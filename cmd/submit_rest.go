package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rest"
)

// restAdapter is the REST backend's adapter (rest.New): spark://
// (standalone cluster mode) and mesos:// masters through Spark's REST
// submission protocol, polled to the end.
type restAdapter struct {
	restPort      int
	idRestPort    int // status and kill's --rest-port
	clientVersion string
	masterUI      string
}

// restOutcome is a REST run as the CLI prints it.
type restOutcome = jsondoc.Outcome[*rest.Result]

// Describe declares the REST backend: spark:// and mesos:// masters in
// cluster mode.
func (*restAdapter) Describe() backendInfo {
	return backendInfo{
		Kind:       submit.KindREST,
		SubmitDocs: []jsondoc.Doc{{Name: "submit-rest", Command: "prebake submit -o json, REST (spark://, mesos://)", Type: jsondoc.TypeOf[restOutcome]()}},
		StatusDocs: []jsondoc.Doc{{Name: "status-rest", Command: "prebake status -o json, spark:// and mesos://", Type: jsondoc.TypeOf[rest.DriverState](),
			Note: "kill -o json prints it when the kill fails"}},
		OptionHints: map[string]string{
			"rest.WithTimeout":      "the limit is --timeout",
			"rest.WithKillOnCancel": "as --kill-on-cancel=false asks",
			"rest.WithPort":         "flag --rest-port",
		},
		IDMasters:  []string{"spark://…", "mesos://…"},
		IDExamples: []string{"driver-20261129101010-0001 --master spark://m1:7077,m2:7077"},
	}
}

func (b *restAdapter) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&b.restPort, "rest-port", 0, "REST port on every spark:// or mesos:// master host (default: 6066 when the URL has the RPC port 7077 or none, else the URL's port)")
	fs.StringVar(&b.clientVersion, "rest-client-version", rest.DefaultClientSparkVersion, "clientSparkVersion sent to the master; before 4.0 MESOS_* variables are sent too")
	fs.StringVar(&b.masterUI, "master-ui", "", "standalone: the master's web UI (http://host:port; default port 8080 of each master host), through which a failed driver's stderr is fetched from its worker")
}

func (b *restAdapter) AddIDFlags(fs *pflag.FlagSet) {
	fs.IntVar(&b.idRestPort, "rest-port", 0, "spark:// masters: the REST port (default 6066 when the URL says 7077 or no port)")
}

// New maps the flags onto rest.New: submit's and an attach's, or status
// and kill's (--rest-port of the command; progress always shown).
func (b *restAdapter) New(r *run) (submit.Backend, error) {
	if r.id != nil {
		return rest.New(r.master, b.options(r.stderr, false, b.idRestPort)...)
	}
	return rest.New(r.master, append(b.options(r.stderr, r.quiet, b.restPort),
		rest.WithPollInterval(r.f.pollInterval),
		rest.WithTimeout(r.f.timeout),
		rest.WithKillOnCancel(r.f.killOnCancel))...)
}

func (b *restAdapter) options(stderr io.Writer, quiet bool, port int) []rest.Option {
	log := stderr
	if quiet {
		log = io.Discard
	}
	return []rest.Option{rest.WithLog(log), rest.WithPort(port), rest.WithClientSparkVersion(b.clientVersion), rest.WithMasterUI(b.masterUI)}
}

// RenderStates prints status (the driver's state line on stdout, the
// master's message on stderr) or kill (the master's answer), as
// spark-submit does; with -o json the state as one object.
func (b *restAdapter) RenderStates(r *run, op string, ss []submit.DriverState, err error) error {
	var st rest.DriverState
	if len(ss) > 0 {
		st, _ = ss[0].(rest.DriverState)
	}
	switch {
	case len(ss) == 0:
		return err
	case op == "kill" && err == nil && r.out != outJSON:
		fmt.Fprintln(r.stdout, st.Message)
		return nil
	case r.out == outJSON:
		if werr := printJSON(r.stdout, st); werr != nil {
			return werr
		}
		return err
	}
	if st.State == "" && st.WorkerID == "" {
		// Nothing known of id (unknown or finished): only the message, on stderr.
		if st.Message != "" {
			fmt.Fprintln(r.stderr, st.Message)
		}
		return err
	}
	line := st.SubmissionID
	for _, f := range []string{st.State, st.WorkerID, st.WorkerHostPort} {
		if f != "" {
			line += " " + f
		}
	}
	fmt.Fprintln(r.stdout, line)
	if st.Message != "" {
		fmt.Fprintln(r.stderr, st.Message)
	}
	return err
}
