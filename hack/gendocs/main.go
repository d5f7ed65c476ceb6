// Command gendocs regenerates docs/reference (the command reference) and
// docs/man (man pages) from prebake's cobra commands: `make docs`.
// cmd's TestDocsCurrent fails when the committed copies are stale.
package main

import (
	"fmt"
	"os"

	"github.com/prebake/prebake/cmd"
	"github.com/prebake/prebake/internal/clidocs"
)

func main() {
	dir := "docs"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := clidocs.Generate(cmd.NewRoot(), dir); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
