package rewrite

import (
	"context"
	"os"

	"github.com/prebake/prebake/submit"
)

// applyArgs is applyArgsIn with this process's environment.
func applyArgs(ctx context.Context, args []string, opts ...Option) (*Result, error) {
	return applyArgsIn(ctx, os.Environ(), args, opts...)
}

// applyArgsIn is the caller's side of Apply for a command line, as the
// tests write it: load args with the environment environ, ask the options'
// JarSource for the jars of its packages, and Apply them.
func applyArgsIn(ctx context.Context, environ, args []string, opts ...Option) (*Result, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	s, err := submit.LoadSubmission(args, environ)
	if err != nil {
		return nil, err
	}
	var jars *Jars
	if o.source != nil && s.Argv.Action == submit.ActionSubmit {
		if jars, err = o.source.Jars(ctx, s.Packages()); err != nil {
			return nil, err
		}
	}
	return Apply(ctx, s, jars, opts...)
}
