package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/prebake/prebake/submit"
)

// notLibrary are the module's directories whose strings may name prebake's
// flags: the edge itself, dev tools, examples, tests and test helpers.
var notLibrary = []string{"cmd", "hack", "examples", "test", "internal/depcheck", "internal/testenv", "internal/jsondoc"}

// flagNameAllowed lists, per file, the prebake flags a library string may
// still name, with the reason. Keep it empty: a library says what failed in
// its own terms (errdefs.OptionError, a typed error or warning kind) and cmd
// names the flag (errhints.go).
var flagNameAllowed = map[string][]string{
	// uv's own command line (uv pip compile's options), which prebake
	// drives: uv's vocabulary, as spark-submit's options are Spark's.
	"resolver/pypi/uv.go": {"--quiet", "--python-version", "--python-platform"},
}

// sparkSubmitSwitches are spark-submit's options without a value (the
// others: submit.IsValueOption).
var sparkSubmitSwitches = []string{"--verbose", "--supervise", "--version", "--usage-error", "--help", "--kill", "--status"}

// prebakeOnlyFlags returns the long flags of every prebake command that are
// not also spark-submit's own options: those are Spark's vocabulary (a
// message may name the --packages or --conf the user typed).
func prebakeOnlyFlags(root *cobra.Command) []string {
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) {
			name := "--" + f.Name
			if !submit.IsValueOption(name) && !slices.Contains(sparkSubmitSwitches, name) {
				seen[name] = true
			}
		}
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestLibrariesNameNoFlag: no string literal or comment of a library
// package (non-test Go files outside the edge) names one of prebake's CLI
// flags (a comment: nor -o json), so library
// errors, warnings and results stay in the library's terms and the CLI adds
// its flags in one place. The flags come from the command tree itself, so a
// new flag is covered as soon as it exists.
func TestLibrariesNameNoFlag(t *testing.T) {
	flags := prebakeOnlyFlags(newRoot())
	if len(flags) < 40 || !slices.Contains(flags, "--timeout") || slices.Contains(flags, "--packages") {
		t.Fatalf("prebake's own flags: %d %v: the walk of the command tree is broken", len(flags), flags)
	}
	quoted := make([]string, len(flags))
	for i, f := range flags {
		quoted[i] = regexp.QuoteMeta(f)
	}
	// A flag name not followed by more of a name: "--store" but not
	// "--store-x" (which would be a flag of its own, or Spark's).
	re := regexp.MustCompile(`(?:^|[^A-Za-z0-9-])(` + strings.Join(quoted, "|") + `)(?:$|[^A-Za-z0-9-])`)
	root := repoRoot(t)
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || slices.ContainsFunc(notLibrary, func(p string) bool { return under(rel, p) }) || strings.HasSuffix(d.Name(), "test")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		// Comments too: a library's doc says what it does in its own
		// terms, not which flag or output format of the CLI reaches it.
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for _, m := range re.FindAllStringSubmatch(c.Text, -1) {
					if !slices.Contains(flagNameAllowed[rel], m[1]) {
						t.Errorf("%s: a library comment names prebake's flag %s: %s", fset.Position(c.Pos()), m[1], c.Text)
					}
				}
				if cliOutput.MatchString(c.Text) {
					t.Errorf("%s: a library comment names the CLI's output flag: %s", fset.Position(c.Pos()), c.Text)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range re.FindAllStringSubmatch(s, -1) {
				if !slices.Contains(flagNameAllowed[rel], m[1]) {
					t.Errorf("%s: a library string names prebake's flag %s: %q\n\tsay it in the library's terms (errdefs.OptionError, a typed error or warning kind) and add the flag in cmd/errhints.go", fset.Position(lit.Pos()), m[1], s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d library files, %d flags: %v", files, len(flags), flags)
	if files < 50 {
		t.Fatalf("scanned %d library files: the walk is broken", files)
	}
}

// cliOutput is the CLI's -o json (or -o text…) in a comment.
var cliOutput = regexp.MustCompile(`(?:^|[^A-Za-z0-9-])-o (?:json|text|yaml|tree|names)\b`)

// under reports whether rel is dir or below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
