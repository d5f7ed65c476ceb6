package clidocs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// go-md2man reads "<spark-submit args>" as an HTML tag and drops it: the
// man pages must keep every angle-bracketed word, in the SYNOPSIS, the
// description and the flags, and leave code as it is; the Markdown
// reference and the commands themselves are unchanged.
func TestManKeepsAngleBrackets(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "a <tool>"}
	long := "Writes <prefix>/sets/<lock-hash>.json; `keep <this>` as code.\n\nExample:\n\n    tool run -- <args>\n\n```\ntool run <x>\n```\nAfter: a -> b."
	sub := &cobra.Command{Use: "run [flags] -- <spark-submit args>", Short: "run it", Long: long, Run: func(*cobra.Command, []string) {}}
	sub.Flags().String("tag", "", "target tag (default: prebake-<hash>)")
	root.PersistentFlags().String("cache", "", "the cache (<dir>)")
	root.AddCommand(sub)

	dir := t.TempDir()
	if err := Generate(root, dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "man", "tool-run.1"))
	if err != nil {
		t.Fatal(err)
	}
	man := string(page)
	synopsis := man[strings.Index(man, ".SH SYNOPSIS"):strings.Index(man, ".SH DESCRIPTION")]
	if !strings.Contains(synopsis, "tool run [flags] -- <spark-submit args>") {
		t.Errorf("SYNOPSIS lost the argument:\n%s", synopsis)
	}
	for _, want := range []string{"<prefix>/sets/<lock-hash>", "keep <this>", "tool run -- <args>", "tool run <x>", "a -> b", "prebake-<hash>", "the cache (<dir>)"} {
		if !strings.Contains(man, want) {
			t.Errorf("the man page lacks %q:\n%s", want, man)
		}
	}
	if strings.Contains(man, `\<`) || strings.Contains(man, `\\<`) || strings.Contains(man, `\>`) {
		t.Errorf("an escape leaked into the man page:\n%s", man)
	}
	ref, err := os.ReadFile(filepath.Join(dir, "reference", "tool_run.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ref), "tool run [flags] -- <spark-submit args>") || strings.Contains(string(ref), `\<`) {
		t.Errorf("the Markdown reference changed:\n%s", ref)
	}
	// The commands are as they were.
	got := []string{sub.Use, sub.Long, root.Short, sub.Flag("tag").Usage, root.PersistentFlags().Lookup("cache").Usage}
	want := []string{"run [flags] -- <spark-submit args>", long, "a <tool>", "target tag (default: prebake-<hash>)", "the cache (<dir>)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Generate changed the commands (-want +got):\n%s", diff)
	}
}

func TestEscapeBlock(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a <b> c", `a \<b\> c`},
		{"`<b>` c <d>", "`<b>` c \\<d\\>"},
		{"para\n\n    code <x>\n    more <y>\n\nnext <z>", "para\n\n    code <x>\n    more <y>\n\nnext \\<z\\>"},
		{"para\n    continued <x>", "para\n    continued \\<x\\>"},
		{"```\n<x>\n```\n<y>", "```\n<x>\n```\n\\<y\\>"},
	}
	for _, tt := range tests {
		if got := escapeBlock(tt.in); got != tt.want {
			t.Errorf("escapeBlock(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
