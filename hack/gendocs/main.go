// Command gendocs regenerates docs/reference (the command reference),
// docs/man (man pages) from prebake's cobra commands and docs/schemas (a
// JSON Schema per -o json document) from the Go types of cmd.JSONDocs:
// `make docs`. cmd's TestDocsCurrent fails when the committed copies are
// stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/prebake/prebake/cmd"
	"github.com/prebake/prebake/internal/clidocs"
	"github.com/prebake/prebake/internal/jsondoc"
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
	if err := jsondoc.WriteSchemas(dir, cmd.JSONDocs(), cmd.JSONSchema); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs: schemas:", err)
		os.Exit(1)
	}
	// docs/json-output.md: its index of documents.
	md := filepath.Join(dir, "json-output.md")
	if b, err := os.ReadFile(md); err == nil {
		s, err := jsondoc.WithIndex(string(b), jsondoc.Index(cmd.JSONDocs()))
		if err == nil {
			err = os.WriteFile(md, []byte(s), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", md+":", err)
			os.Exit(1)
		}
	}
}
