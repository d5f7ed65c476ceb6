// Package clidocs writes the command reference (Markdown) and the man pages
// of a cobra command tree, reproducibly: no generation date, so that a test
// can regenerate them and fail when the committed copies are stale.
package clidocs

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Generate writes root's command reference into dir/reference (one
// Markdown file per command, prebake.md the index) and its man pages into
// dir/man (section 1). It replaces what those two directories held.
func Generate(root *cobra.Command, dir string) error {
	root.DisableAutoGenTag = true
	ref, man := filepath.Join(dir, "reference"), filepath.Join(dir, "man")
	for _, d := range []string{ref, man} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := doc.GenMarkdownTree(root, ref); err != nil {
		return fmt.Errorf("command reference: %w", err)
	}
	// A fixed date: the pages change only when the commands do.
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hdr := &doc.GenManHeader{Title: "PREBAKE", Section: "1", Source: "prebake", Manual: "prebake manual", Date: &date}
	if err := doc.GenManTree(root, hdr, man); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}
