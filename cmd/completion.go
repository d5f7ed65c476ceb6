package cmd

import (
	"github.com/spf13/cobra"

	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit/k8s"
)

// enumValues are the fixed values of flags that take one of a few, for
// shell completion.
var enumValues = map[string][]string{
	"conflict":        {string(resolver.ConflictLatest), string(resolver.ConflictNearest)},
	"checksum-policy": {string(resolver.ChecksumStrict), string(resolver.ChecksumWarn), string(resolver.ChecksumIgnore)},
	"url-style":       {string(s3store.StyleS3A), string(s3store.StylePresigned), string(s3store.StyleHTTPS)},
	"via":             {"operator"},
	"submitter":       {k8s.SubmitterSparkSubmit, k8s.SubmitterNative, k8s.SubmitterAuto},
	"compression":     compressionNames(),
	"strict":          append([]string{"true", "false", "all"}, layers.StrictKinds...),
}

// compressionNames are --compression's values.
func compressionNames() []string {
	out := make([]string, len(layers.Compressions))
	for i, c := range layers.Compressions {
		out[i] = string(c)
	}
	return out
}

// outputValues are -o's values per command (the default first).
var outputValues = map[string][]outputFormat{
	"resolve": {outTree, outNames, outJSON},
	"sbom":    {outJSON},
	"submit":  {outText, outJSON, outYAML},
}

// addCompletions registers the value completions of every command's enum
// flags and of -o.
func addCompletions(root *cobra.Command) {
	fixed := func(vals []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = root.RegisterFlagCompletionFunc("output", func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		fs := commandOutputs(c.Name())
		vals := make([]string, len(fs))
		for i, f := range fs {
			vals[i] = string(f)
		}
		return vals, cobra.ShellCompDirectiveNoFileComp
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, vals := range enumValues {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fixed(vals))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
