package cmd

import (
	"context"
	"errors"
	"io"

	"github.com/prebake/prebake/lock"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/lockdiff"
)

// exitDiffer is the exit code of `lock diff --check` when the locks differ:
// the old lock is stale. diff(1)'s 1 is reserved for driver exit codes in
// prebake's one exit-code table.
const exitDiffer = exitcode.StaleLock

func newLockCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:     "lock",
		Short:   "Work with prebake.lock files",
		Example: `  prebake lock diff old/prebake.lock prebake.lock`,
		Args:    cobra.NoArgs,
		RunE:    func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	var check bool
	diff := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Show what changed between two locks, and why",
		Long: `diff compares two lockfiles module by module (group:artifact[:classifier]):
added, removed, upgraded or downgraded (by Ivy's latest-revision order), moved to
another repository, or — loudly — the same version with a different sha256, a
supply-chain red flag. The inputs that changed (packages, repositories, excludes,
conflict mode) come first, as the why: with equal inputs, a change can only come
from what the repositories serve.

Exit codes: 0 (with --check: only when the locks are equal; 78 when they
differ); 64 for a usage error, 65 for a malformed lock, 66 for a missing one.`,
		Example: `  prebake lock diff prebake.lock.orig prebake.lock
  git show HEAD~1:prebake.lock > /tmp/old.lock && prebake lock diff -o json /tmp/old.lock prebake.lock
  prebake lock diff --check committed.lock fresh.lock   # CI: exit 78 when they differ`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return runLockDiff(c.Context(), g, args[0], args[1], check, c.OutOrStdout())
		},
	}
	diff.Flags().BoolVar(&check, "check", false, "exit 78 (a stale lock) when the locks differ")
	c.AddCommand(diff)
	return c
}

func runLockDiff(_ context.Context, g *globals, oldPath, newPath string, check bool, stdout io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	oldLock, err := lock.Read(oldPath)
	if err != nil {
		return err
	}
	newLock, err := lock.Read(newPath)
	if err != nil {
		return err
	}
	d, err := lockdiff.Compare(oldPath, oldLock, newPath, newLock)
	if err != nil {
		return err
	}
	if out == outJSON {
		err = printJSON(stdout, d)
	} else {
		err = lockdiff.WriteText(stdout, d)
	}
	if err != nil {
		return exitcode.New(exitcode.Internal, err)
	}
	if check && !d.Equal {
		return exitcode.New(exitDiffer, errors.New("the locks differ"))
	}
	return nil
}
