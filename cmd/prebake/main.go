// Command prebake resolves Spark --packages ahead of time, caches the jars in
// an image layer or S3, rewrites the submission and follows the driver to its end.
package main

import (
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/prebake/prebake/cmd"
)

func main() {
	// Libraries that log through the standard logger (the S3 transfer
	// manager reports an aborted multipart upload there, which prebake
	// already handles and reports) must not write to stderr behind
	// prebake's back; prebake's own progress goes through its reporter.
	log.SetOutput(io.Discard)
	if filepath.Base(os.Args[0]) == "spark-submit" {
		// Installed as spark-submit (README, "Airflow"): the same argv.
		os.Exit(cmd.ExecuteAsSparkSubmit(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(cmd.Execute(os.Args[1:]))
}
