package cmd

import "github.com/spf13/cobra"

// bakeSubcommands are added under `prebake bake` (image: cmd/bake_image.go,
// s3: cmd/bake_s3.go).
var bakeSubcommands []func(g *globals) *cobra.Command

func registerBake(f func(g *globals) *cobra.Command) { bakeSubcommands = append(bakeSubcommands, f) }

func init() {
	register(func(g *globals) *cobra.Command {
		c := &cobra.Command{
			Use:   "bake",
			Short: "Cache resolved jars in an image layer or an S3 store",
			Example: `  prebake bake image --base apache/spark:3.5.0 --target registry.example.com/team/spark-jobs --lock prebake.lock
  prebake bake s3 --store s3://team-spark-jars/prebake --lock prebake.lock`,
			// A typo (`bake imag`) is a usage error, not help and exit 0.
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
		}
		for _, f := range bakeSubcommands {
			c.AddCommand(f(g))
		}
		return c
	})
}
