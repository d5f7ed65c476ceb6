package cmd

import (
	"errors"
	"fmt"

	"github.com/prebake/prebake/errdefs"
)

// optionFlags names, for each library option that a flag sets, the flag (or
// flags) that set it. Libraries name their own options in errors
// (errdefs.OptionError); the edge adds the flag, here and only here.
var optionFlags = map[string]string{
	"layers.BakeInput.JarsDir":   "--jars-dir",
	"layers.BakeInput.Target":    "--target",
	"layers.BakeInput.Tag":       "--tag",
	"layers.BakeInput.Platforms": "--platform",
	"layers.WithCompression":     "--compression",
	"layers.WithBasicAuth":       "--registry-auth",
}

// errorHints are hints for typed library errors that no single option
// explains, tried in order with errors.Is.
var errorHints = []struct {
	err  error
	hint string
}{}

// hintError is err with the CLI's hint appended to its message; it keeps
// err's chain (and so its exit code).
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + "; " + e.hint }
func (e *hintError) Unwrap() error { return e.err }

// withHint adds to err the hint naming the CLI flag for the library option
// or typed error it reports, if there is one.
func withHint(err error) error {
	if err == nil {
		return nil
	}
	if flag, ok := optionFlags[errdefs.OptionOf(err)]; ok {
		return &hintError{err: err, hint: fmt.Sprintf("flag %s", flag)}
	}
	for _, h := range errorHints {
		if errors.Is(err, h.err) {
			return &hintError{err: err, hint: h.hint}
		}
	}
	return err
}
