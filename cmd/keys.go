package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/atomicfile"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/pgpverify"
)

// newKeysCmd is prebake keys: the keyring --verify-signatures pins.
func newKeysCmd(g *globals) *cobra.Command {
	keyring := defaultKeyring
	c := &cobra.Command{
		Use:   "keys",
		Short: "Pin the PGP keys whose signatures --verify-signatures accepts",
		Long: `keys manages the keyring file --verify-signatures checks jars' signatures
(.asc) against: armored public keys, committed next to prebake.lock. A lock
written with --verify-signatures records each jar's signer (signedBy); a
frozen run checks it again, offline, from the cached signatures.`,
		Example: `  # pin the keys of a project's KEYS file (Apache projects publish one)
  prebake keys add KEYS
  # pin only the key that signs the releases
  prebake keys add --fingerprint 'A1B2…' KEYS
  prebake keys list -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.PersistentFlags().StringVar(&keyring, "keyring", defaultKeyring, "the keyring file (armored public keys)")
	var only []string
	add := &cobra.Command{
		Use:   "add KEYFILE...",
		Short: "Add public keys (armored or binary files, - for stdin) to the keyring",
		Example: `  prebake keys add KEYS
  curl -s https://downloads.apache.org/spark/KEYS | prebake keys add --keyring ci/keys.asc -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runKeysAdd(g, keyring, args, only, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	add.Flags().StringArrayVar(&only, "fingerprint", nil, "add only the key with this primary fingerprint (repeatable)")
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the pinned keys",
		Example: `  prebake keys list --keyring ci/keys.asc -o json`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runKeysList(g, keyring, c.OutOrStdout())
		},
	}
	c.AddCommand(add, list)
	return c
}

func runKeysAdd(g *globals, keyring string, files, only []string, stdin io.Reader, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	var added *pgpverify.Keyring
	for _, f := range files {
		var kr *pgpverify.Keyring
		if f == "-" {
			data, err := io.ReadAll(io.LimitReader(stdin, pgpverify.MaxKeyringSize+1))
			if err != nil {
				return exitcode.New(exitcode.DataErr, err)
			}
			if len(data) > pgpverify.MaxKeyringSize {
				return exitcode.Errorf(exitcode.DataErr, "stdin: more than %d bytes of keys", pgpverify.MaxKeyringSize)
			}
			kr, err = pgpverify.ParseKeyring("stdin", data)
			if err != nil {
				return err
			}
		} else if kr, err = pgpverify.ReadKeyring(f); err != nil {
			return err
		}
		if kr.Skipped > 0 {
			fmt.Fprintf(stderr, "warning: %s: %d key blocks could not be read (old or unsupported keys) and were skipped\n", f, kr.Skipped)
		}
		if added == nil {
			added = kr
		} else {
			added = added.Merge(kr)
		}
	}
	if len(only) > 0 {
		if added, err = added.Only(only); err != nil {
			return err
		}
	}
	merged := added
	if old, err := pgpverify.ReadKeyring(keyring); err == nil {
		merged = old.Merge(added)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var buf bytes.Buffer
	if err := merged.Armored(&buf); err != nil {
		return exitcode.New(exitcode.Internal, err)
	}
	if err := atomicfile.Write(keyring, buf.Bytes(), 0o644); err != nil {
		return exitcode.New(exitcode.CantCreate, fmt.Errorf("writing keyring %s: %w", keyring, err))
	}
	return printKeys(out, stdout, keyring, added.Keys())
}

func runKeysList(g *globals, keyring string, stdout io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	kr, err := pgpverify.ReadKeyring(keyring)
	if err != nil {
		return err
	}
	return printKeys(out, stdout, keyring, kr.Keys())
}

func printKeys(out outputFormat, w io.Writer, keyring string, keys []pgpverify.Key) error {
	if out == outJSON {
		return printJSON(w, jsondoc.Keys{Keyring: keyring, Keys: keys})
	}
	for _, k := range keys {
		exp := ""
		switch {
		case !k.Expires.IsZero() && k.Expires.Before(time.Now()):
			exp = " EXPIRED " + k.Expires.Format("2006-01-02")
		case !k.Expires.IsZero():
			exp = " expires " + k.Expires.Format("2006-01-02")
		}
		if k.Revoked {
			// Its signatures are refused whatever their date.
			exp += " REVOKED"
		}
		fmt.Fprintf(w, "%s  created %s%s  %s\n", k.Fingerprint, k.Created.Format("2006-01-02"), exp, strings.Join(k.UserIDs, ", "))
	}
	return nil
}
