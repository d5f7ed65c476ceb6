package cmd

import "github.com/spf13/cobra"

// newBakeCmd is `prebake bake` with its image and s3 subcommands.
func newBakeCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "bake",
		Short: "Cache resolved jars in an image layer or an S3 store",
		Example: `  prebake bake image --base apache/spark:3.5.0 --target registry.example.com/team/spark-jobs --lock prebake.lock
  prebake bake s3 --store s3://team-spark-jars/prebake --lock prebake.lock`,
		// A typo (`bake imag`) is a usage error, not help and exit 0.
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newBakeImageCmd(g), newBakeS3Cmd(g))
	return c
}
