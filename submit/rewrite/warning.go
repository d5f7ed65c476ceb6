package rewrite

import (
	"encoding/json"

	"github.com/prebake/prebake/internal/redact"
)

// WarningKind is what a rewrite warning is about, so that a caller can add
// its own words to it (the CLI names the flags that fix it).
type WarningKind int

// The warning kinds.
const (
	WarnOther WarningKind = iota
	// WarnFileURLs: the cluster reads the jars from file: URLs, which only a
	// directory mounted at the same path on every node makes readable.
	WarnFileURLs
	// WarnLayoutImage: the image is an OCI layout on this host, which no
	// node can pull.
	WarnLayoutImage
	// WarnImageNotK8s: an image (WithImage) was given for a master that is
	// not Kubernetes, so no image is set.
	WarnImageNotK8s
	// WarnS3AURLs: the jars are a store's s3a:// URLs, which Spark reads
	// only with hadoop-aws and S3 credentials (pipeline.Prepare adds it).
	WarnS3AURLs
	// WarnClasspath: the jars do not fit the Spark they run on (a Scala or
	// Spark version mismatch with the base image or the local Spark, or a
	// base without Spark); pipeline.Prepare adds it. It changes the outcome.
	WarnClasspath
)

// Warning is one warning of a rewrite: its Kind and its text, in the
// library's terms. It marshals to JSON as its text.
type Warning struct {
	Kind WarningKind
	Text string
}

func (w Warning) String() string { return w.Text }

// MarshalJSON writes w as its text.
func (w Warning) MarshalJSON() ([]byte, error) { return json.Marshal(w.Text) }

// UnmarshalJSON reads a warning's text (its kind is WarnOther).
func (w *Warning) UnmarshalJSON(b []byte) error {
	*w = Warning{}
	return json.Unmarshal(b, &w.Text)
}

// warnings makes warnings of kind WarnOther.
func warnings(texts []string) []Warning {
	ws := make([]Warning, len(texts))
	for i, t := range texts {
		ws[i] = Warning{Text: t}
	}
	return ws
}

// redactWarnings redacts the text of each warning.
func redactWarnings(ws []Warning) {
	for i := range ws {
		ws[i].Text = redact.String(ws[i].Text)
	}
}

// Warnings are a rewrite's warnings.
type Warnings = []Warning
