package cmd

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/layers"
)

// strictness is --strict's value: off, every kind but spark-patch
// (--strict, --strict=true, --strict=all), or the kinds named
// (--strict=scala-binary,hadoop-version).
type strictness struct {
	on    bool
	kinds []string // nil: layers.StrictDefault
	text  string
}

func (s *strictness) String() string {
	if s == nil || !s.on {
		return "false"
	}
	return s.text
}

// Set reads a value of the flag, $PREBAKE_STRICT or strict: in prebake.yaml.
func (s *strictness) Set(v string) error {
	kinds, err := layers.ParseStrict(v)
	if err != nil {
		return err
	}
	s.on, s.kinds, s.text = kinds != nil, kinds, strings.TrimSpace(v)
	if v := strings.TrimSpace(v); v == "true" || v == "all" {
		s.kinds = nil
	}
	return nil
}

func (s *strictness) Type() string { return "kinds" }

// addStrictFlag adds --strict to fs: a bare --strict is every kind.
func addStrictFlag(fs *pflag.FlagSet, s *strictness) {
	fs.Var(s, "strict", strictHelp)
	fs.Lookup("strict").NoOptDefVal = "true"
}
