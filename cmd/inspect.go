package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/layers"
)

func newInspectCmd(g *globals) *cobra.Command {
	var rf registryFlags
	c := &cobra.Command{
		Use:   "inspect REF",
		Short: "Print the prebake annotations of an image baked by `bake image`",
		Long: `inspect reads the manifest (or index) REF names, a registry reference or
oci:PATH[:tag], and prints its digest reference, its annotations
(dev.prebake.lock, dev.prebake.jars, dev.prebake.coords, …) and the
spark.jars value they give.`,
		Example: `  prebake inspect registry.example.com/team/spark-jobs:prebake-90e7beb3490e9d927e196eaf3fdb4748
  prebake inspect -o json oci:.demo/image@sha256:4b972e43d46fe31a142015a7f724c463228a7ad8b3e9e01a9a0b85f5918ce495`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runInspect(c.Context(), g, &rf, args[0], c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	rf.add(c.Flags())
	return c
}

func runInspect(ctx context.Context, g *globals, rf *registryFlags, ref string, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if err := checkTransport("inspect "+ref, ref); err != nil {
		return err
	}
	opts, err := rf.options(nil)
	if err != nil {
		return err
	}
	info, err := layers.Inspect(ctx, ref, opts...)
	if err != nil {
		return err
	}
	if out == outJSON {
		return printJSON(stdout, info)
	}
	fmt.Fprintln(stdout, info.Ref)
	if !hasPrebakeAnnotations(info.Annotations) && !g.quiet {
		fmt.Fprintf(stderr, "%s has no dev.prebake.* annotations: it was not baked by prebake bake image\n", ref)
	}
	keys := make([]string, 0, len(info.Annotations))
	for k := range info.Annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "%s=%s\n", k, info.Annotations[k])
	}
	if info.JarsDir != "" {
		urls := make([]string, len(info.Files))
		for i, f := range info.Files {
			urls[i] = "local://" + path.Join(info.JarsDir, f)
		}
		fmt.Fprintf(stdout, "spark.jars=%s\n", strings.Join(urls, ","))
	}
	return nil
}

// checkTransport refuses a reference with no registry host and no oci:
// prefix: it would silently mean Docker Hub, and is usually a layout
// directory with oci: forgotten.
func checkTransport(what, ref string) error {
	if strings.HasPrefix(ref, layers.OCIPrefix) {
		return nil
	}
	first, _, hasSlash := strings.Cut(ref, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return nil
	}
	name, _, _ := strings.Cut(ref, "@")
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return exitcode.Errorf(exitcode.Usage, "%s: that is a directory here; an OCI layout is named oci:%s", what, ref)
	}
	if i := strings.LastIndex(name, ":"); i > 0 {
		if st, err := os.Stat(name[:i]); err == nil && st.IsDir() {
			return exitcode.Errorf(exitcode.Usage, "%s: %s is a directory here; an OCI layout is named oci:%s", what, name[:i], ref)
		}
	}
	return exitcode.Errorf(exitcode.Usage, "%s: no registry host; give registry.example.com/REPO[:tag] (docker.io/REPO for Docker Hub) or oci:PATH for a layout", what)
}

func hasPrebakeAnnotations(a map[string]string) bool {
	for k := range a {
		if strings.HasPrefix(k, "dev.prebake.") {
			return true
		}
	}
	return false
}
