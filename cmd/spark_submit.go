package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"syscall"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/local"
)

// ExecuteAsSparkSubmit is prebake installed under the name spark-submit (a
// symlink or copy ahead of Spark's on $PATH), so that tools which run
// spark-submit themselves, such as Airflow's SparkSubmitOperator, get
// prebake without changing a line: a submission runs as
// `prebake submit -- ARGS` (its settings from $PREBAKE_STORE,
// $PREBAKE_IMAGE_TARGET, $PREBAKE_CONFIG or ./prebake.yaml), and
// --status, --kill, --version and --help go to the real spark-submit
// unchanged. The real one is $PREBAKE_SPARK_SUBMIT, else
// $SPARK_HOME/bin/spark-submit; never prebake itself.
func ExecuteAsSparkSubmit(args []string, stdout, stderr io.Writer) int {
	real := os.Getenv("PREBAKE_SPARK_SUBMIT")
	if real == "" && os.Getenv("SPARK_HOME") != "" {
		real = sparkSubmitBin("", os.Getenv, exec.LookPath)
	}
	self, _ := os.Executable()
	if real == "" || local.SameFile(real, self) {
		fmt.Fprintf(stderr, "prebake (as spark-submit): set $SPARK_HOME to the Spark distribution, or $PREBAKE_SPARK_SUBMIT to its spark-submit, so that prebake can run the real one\n")
		return exitcode.Usage
	}
	if v, err := submit.ParseArgv(args); err != nil || v.Action != submit.ActionSubmit {
		return passThrough(real, args, stdout, stderr)
	}
	return ExecuteContext(context.WithValue(context.Background(), linkKey{}, true), append([]string{"submit", "--spark-submit", real, "--"}, args...), stdout, stderr)
}

// linkKey marks the context of a run through the spark-submit link.
type linkKey struct{}

// asSparkSubmit reports whether ctx is a run through the spark-submit
// link, whose messages speak spark-submit's language: the user typed a
// spark-submit command line, with no prebake flag and no "--".
func asSparkSubmit(ctx context.Context) bool {
	v, _ := ctx.Value(linkKey{}).(bool)
	return v
}

// linkMessage rewrites an error message for the spark-submit link: each
// prebake flag that has a setting becomes its variable (and its
// prebake.yaml key), the only way to give it there.
func linkMessage(msg string) string {
	for _, s := range settings {
		for _, name := range s.flags {
			re := regexp.MustCompile(`--` + regexp.QuoteMeta(name) + `\b([^-]|$)`)
			msg = re.ReplaceAllString(msg, "$$"+s.env+" (prebake.yaml: "+s.key+")$1")
		}
	}
	return msg
}

// passThrough runs the real spark-submit with args as they are and returns
// its exit code; SIGINT and SIGTERM are forwarded.
func passThrough(bin string, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := exec.CommandContext(ctx, bin, args...)
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if code := ee.ExitCode(); code >= 0 {
			return code
		}
		return 128 + int(syscall.SIGTERM)
	}
	fmt.Fprintf(stderr, "prebake (as spark-submit): %v\n", err)
	return exitcode.Usage
}
