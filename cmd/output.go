package cmd

import (
	"fmt"
	"strings"
)

// outputFormat is -o's value: what a command prints its result as.
type outputFormat string

// The output formats. Each command accepts some of them (checkOutput); the
// empty format is "not given": the command's default.
const (
	outText outputFormat = "text"
	outJSON outputFormat = "json" // one line
	// outJSONPretty is json, indented: commands see outJSON (checkOutput)
	// and printJSON indents.
	outJSONPretty outputFormat = "json-pretty"
	outYAML       outputFormat = "yaml"  // submit --submitter native --dry-run: the Kubernetes objects
	outTree       outputFormat = "tree"  // resolve: the dependency tree
	outNames      outputFormat = "names" // resolve: the jar file names
)

// outputFormats are every format, in the order -o's help gives them.
var outputFormats = []outputFormat{outText, outJSON, outJSONPretty, outYAML, outTree, outNames}

// outputValue is -o as a pflag.Value: it parses into an outputFormat, so a
// value that is no format is a flag error (exit 64) before anything runs.
type outputValue struct{ p *outputFormat }

func (v outputValue) String() string {
	if v.p == nil {
		return ""
	}
	return string(*v.p)
}

func (v outputValue) Set(s string) error {
	for _, f := range outputFormats {
		if outputFormat(s) == f {
			*v.p = f
			return nil
		}
	}
	return &badOutputError{value: s}
}

// badOutputError is a -o value that is no output format; flagError names
// the formats of the command it was given to.
type badOutputError struct{ value string }

func (e *badOutputError) Error() string {
	return fmt.Sprintf("not an output format: want one of %s", formatList(outputFormats))
}

// commandOutputs are the formats a command prints, its default first.
func commandOutputs(command string) []outputFormat {
	fs, ok := outputValues[command]
	if !ok {
		fs = []outputFormat{outText, outJSON}
	}
	return withPretty(fs)
}

// withPretty is fs with json-pretty after json.
func withPretty(fs []outputFormat) []outputFormat {
	var out []outputFormat
	for _, f := range fs {
		out = append(out, f)
		if f == outJSON {
			out = append(out, outJSONPretty)
		}
	}
	return out
}

func (outputValue) Type() string { return "format" }

// formatList is "text|json|…".
func formatList(fs []outputFormat) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, "|")
}
