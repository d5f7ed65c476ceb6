package cmd

import (
	"io"

	"github.com/prebake/prebake/lock"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/sbom"
	"github.com/prebake/prebake/layers"
)

func newSBOMCmd(g *globals) *cobra.Command {
	var lock string
	c := &cobra.Command{
		Use:   "sbom --lock FILE",
		Short: "Print a CycloneDX 1.5 JSON SBOM of the jars a lock names",
		Long: `sbom prints a CycloneDX 1.5 JSON document on stdout: one library component per
locked jar (group, name, version, purl pkg:maven/..., SHA-256, and the repository
URL it was served from), the lock's inputs as metadata properties, and prebake
as the tool. The same lock gives a byte-identical SBOM: the serialNumber is a
UUID derived from the lock hash and metadata.timestamp is SOURCE_DATE_EPOCH when
set, else 1970-01-01T00:00:01Z.`,
		Example: `  prebake sbom --lock prebake.lock > sbom.cdx.json`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runSBOM(g, lock, c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&lock, "lock", "prebake.lock", "the lockfile to describe")
	return c
}

func runSBOM(g *globals, lockPath string, stdout io.Writer) error {
	if _, err := checkOutput(g, outJSON); err != nil {
		return err
	}
	ts, err := layers.Epoch()
	if err != nil {
		return err
	}
	l, err := lock.Read(lockPath)
	if err != nil {
		return err
	}
	b, err := sbom.New(l, sbom.WithTimestamp(ts), sbom.WithToolVersion(buildVersion()))
	if err != nil {
		return err
	}
	data, err := b.Marshal()
	if err != nil {
		return exitcode.New(exitcode.Internal, err)
	}
	_, err = stdout.Write(data)
	return err
}
