// Command prebake resolves Spark --packages ahead of time, caches the jars in
// an image layer or S3, rewrites the submission and follows the driver to its end.
package main

import (
	"os"

	"github.com/prebake/prebake/cmd"
)

func main() {
	os.Exit(cmd.Execute(os.Args[1:]))
}
