// Package clidocs writes the command reference (Markdown) and the man pages
// of a cobra command tree, reproducibly: no generation date, so that a test
// can regenerate them and fail when the committed copies are stale.
package clidocs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
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
	restore := escapeForMan(root)
	defer restore()
	if err := doc.GenManTree(root, hdr, man); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// escapeForMan backslash-escapes '<' and '>' in the texts of root's tree
// that cobra hands go-md2man as Markdown (each command's use line, short
// and long text, and flag usages), outside code: go-md2man reads
// "<spark-submit args>" as an HTML tag and drops it, from the SYNOPSIS
// among others. The Markdown reference keeps the texts as they are. It
// returns the function that restores them.
func escapeForMan(root *cobra.Command) (restore func()) {
	var undo []func()
	flags := map[*pflag.Flag]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		use, short, long := c.Use, c.Short, c.Long
		c.Use, c.Short, c.Long = escapeInline(c.Use), escapeInline(c.Short), escapeBlock(c.Long)
		undo = append(undo, func() { c.Use, c.Short, c.Long = use, short, long })
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags(), c.InheritedFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if flags[f] {
					return
				}
				flags[f] = true
				usage := f.Usage
				f.Usage = escapeInline(f.Usage)
				undo = append(undo, func() { f.Usage = usage })
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// escapeInline escapes '<' and '>' in one paragraph's text, outside code
// spans (`…`, where Markdown keeps them as they are).
func escapeInline(s string) string {
	if !strings.ContainsAny(s, "<>") {
		return s
	}
	var b strings.Builder
	code := false
	for _, r := range s {
		switch {
		case r == '`':
			code = !code
		case (r == '<' || r == '>') && !code:
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escapeBlock is escapeInline over a text of paragraphs, leaving its code
// blocks as they are: fenced (```) ones, and indented ones (a tab or four
// spaces after a blank line or another code line).
func escapeBlock(s string) string {
	if !strings.ContainsAny(s, "<>") {
		return s
	}
	lines := strings.Split(s, "\n")
	fenced, indented, blank := false, false, true
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fenced = !fenced
		case fenced:
		case trimmed == "":
			indented = false
		case (strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "    ")) && (blank || indented):
			indented = true
		default:
			indented = false
			lines[i] = escapeInline(l)
		}
		blank = trimmed == ""
	}
	return strings.Join(lines, "\n")
}
