package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/submit/connect"
)

func newConnectCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:     "connect",
		Short:   "Push a locked jar set into a Spark Connect session",
		Example: `  prebake connect add --remote "sc://spark-connect:15002/;user_id=etl;session_id=$SESSION" --lock prebake.lock`,
		Args:    cobra.NoArgs,
		RunE:    func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newConnectAddCmd(g))
	return c
}

type connectAddOptions struct {
	resolve resolveFlags
	remote  string
	timeout time.Duration
}

func newConnectAddCmd(g *globals) *cobra.Command {
	o := &connectAddOptions{}
	c := &cobra.Command{
		Use:   "add --remote sc://HOST:PORT[/;session_id=UUID;user_id=ID] (--lock FILE | --packages COORDS)",
		Short: "Add the locked (or resolved) jars to a Spark Connect session, sending only those it lacks",
		Long: `connect add pushes jars into a Spark Connect session through the Connect artifact
protocol (AddArtifacts, as Spark's own clients send them), as jars/<file>, so that
they are on the session's class path: nothing is resolved by the server or the
client. It first asks the server (ArtifactStatus) which of the set it already
has, and sends only the others: a second push sends no jar bytes.

The session is the one --remote names (session_id, user_id as in Spark's
connection strings; user_id defaults to $USER, as pyspark's does); without a
session_id a new one is made, and the result gives the connection string to
use: SparkSession.builder.remote("<remote>").`,
		Example: `  prebake connect add --remote "sc://localhost:15002/;session_id=$(uuidgen)" --lock prebake.lock -o json
  prebake connect add --remote sc://spark-connect.data:15002 --packages org.apache.spark:spark-avro_2.13:4.0.0`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runConnectAdd(c.Context(), g, o, args, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.remote, "remote", "", "the Spark Connect server and session: sc://host[:port][/;session_id=UUID;user_id=ID;token=…;use_ssl=true] (default $SPARK_REMOTE); a token goes only over TLS, as pyspark sends it")
	durationVar(fs, &o.timeout, "timeout", connect.DefaultTimeout, fmt.Sprintf("bound the whole push (0: none); each call the server must answer within %s; exit 75 when reached", connect.DefaultCallTimeout))
	o.resolve.add(fs)
	return c
}

func runConnectAdd(ctx context.Context, g *globals, o *connectAddOptions, args []string, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if o.remote == "" {
		o.remote = os.Getenv("SPARK_REMOTE")
	}
	if o.remote == "" {
		return exitcode.Errorf(exitcode.Usage, "--remote is required (sc://host:port; or $SPARK_REMOTE)")
	}
	remote, err := connect.ParseRemote(o.remote)
	if err != nil {
		return err
	}
	if remote.UserID == "" {
		remote.UserID = os.Getenv("USER") // pyspark's default user_id
	}
	rep := g.reporter(stderr)
	defer rep.Wait()
	lf, fetch, err := resolveLockAndJars(ctx, &o.resolve, args, rep)
	if err != nil {
		return err
	}
	paths, err := fetch(ctx)
	if err != nil {
		return err
	}
	if len(paths) != len(lf.Jars()) {
		return errdefs.Errorf(errdefs.Internal, "connect add: %d jar files for %d locked artifacts", len(paths), len(lf.Jars()))
	}
	jars := make([]connect.Jar, len(paths))
	for i, a := range lf.Jars() {
		jars[i] = connect.Jar{File: a.File, Path: paths[i], Sha256: a.Sha256, Size: a.Size}
	}
	res, err := connect.Push(ctx, remote, jars, connect.WithLogf(rep.Warnf), connect.WithTimeout(o.timeout))
	rep.Wait()
	if err != nil {
		return err
	}
	js := jsondoc.ConnectAdd{Result: res, LockHash: lf.LockHash}
	if out == outJSON {
		return printJSON(stdout, js)
	}
	keepResult(stdout, js)
	if !g.quiet {
		fmt.Fprintf(stderr, "connect add: %d jars sent (%d bytes), %d already in the session\n", res.Sent, res.JarBytesSent, res.Present)
	}
	_, err = fmt.Fprintln(stdout, res.Remote)
	return err
}
