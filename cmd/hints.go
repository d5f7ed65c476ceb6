package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// needClusterTarget refuses, before anything is resolved, a cluster-mode
// submission with packages and no place the driver can read them from,
// naming submit's own flags (the rewrite's message names rewrite's).
func needClusterTarget(ctx context.Context, f *submitFlags, sub *submit.Submission) error {
	kind := submit.ClusterKind(sub.Master())
	// The rewrite's rule (rewrite.NeedsClusterJars), checked early; an
	// unknown master is left to the rewrite's own refusal.
	if !rewrite.NeedsClusterJars(kind, sub.DeployMode()) || kind == submit.ClusterOther || f.s3.store != "" || f.imageTarget != "" {
		return nil
	}
	if !hasCoordinate([]string{sub.Packages().Packages}) && !hasCoordinate(f.resolve.packages) {
		return nil
	}
	if asSparkSubmit(ctx) {
		return exitcode.Errorf(exitcode.Usage, "%s cluster mode: the driver does not run here, so local jar paths cannot work; set $PREBAKE_IMAGE_TARGET=REPO (k8s) or $PREBAKE_STORE=s3://bucket/prefix in the environment (or imageTarget: / store: in prebake.yaml)", kind)
	}
	return exitcode.Errorf(exitcode.Usage, "%s cluster mode: the driver does not run here, so local jar paths cannot work; give --image-target REPO (k8s) or --store s3://bucket/prefix (or imageTarget:/store: in prebake.yaml, or $PREBAKE_IMAGE_TARGET/$PREBAKE_STORE)", kind)
}

// sparkSubmitArgCommands take spark-submit arguments after "--".
var sparkSubmitArgCommands = map[string]bool{"submit": true, "rewrite": true}

// sparkOnlySwitches are spark-submit options without a value that prebake
// has no flag of the same name for.
var sparkOnlySwitches = map[string]bool{"--verbose": true, "--supervise": true, "--version": true, "--usage-error": true}

// flagError turns cobra's flag errors into usage errors (64), and says
// where spark-submit's options go when one is given before "--".
func flagError(c *cobra.Command, err error) error {
	var bo *badOutputError
	if errors.As(err, &bo) {
		return exitcode.Errorf(exitcode.Usage, "%s: -o %q: must be one of %v", c.CommandPath(), bo.value, commandOutputs(c.Name()))
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: "); ok && sparkSubmitArgCommands[c.Name()] {
		if submit.IsValueOption(name) || sparkOnlySwitches[name] {
			return exitcode.Errorf(exitcode.Usage, "%s: unknown flag: %s; spark-submit's arguments go after --: prebake %s [prebake flags] -- %s …", c.CommandPath(), name, c.Name(), name)
		}
	}
	if !c.HasParent() {
		return exitcode.New(exitcode.Usage, err) // "prebake: " is added once, at the edge
	}
	return exitcode.New(exitcode.Usage, fmt.Errorf("%s: %w", c.CommandPath(), err))
}
