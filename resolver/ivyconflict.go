package resolver

import (
	"context"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/resolver/ivysettings"
)

// ivySettingsConflict checks an Ivy settings file's conflict manager:
// <settings defaultConflictManager="nearest"> names Ivy 2.6.0's
// Maven-style manager (IVY-813). Under Ivy 2.5, which has no such
// manager, it is refused (errdefs.BadArgument) naming the file and line,
// before any request, as spark-submit fails on it. Under Ivy 2.6.0 the
// file loads, but the real spark-submit (the newest line's with Ivy 2.6.0's
// jar, testdata/parity/spark/nearest@2.6.0.golden) still resolves with
// latest-revision: Ivy's own command line applies the manager, Spark's
// resolution does not. So the request keeps its conflict mode, as Spark.
func ivySettingsConflict(ctx context.Context, req Request) error {
	if req.IvySettings == "" {
		return nil
	}
	st, err := ivysettings.Load(ctx, req.IvySettings, ivysettings.JVMEnv(req.Home))
	if err != nil {
		return err
	}
	if st.ConflictManager != ivysettings.ConflictNearest {
		return nil
	}
	ivy, err := EffectiveIvy(req.SparkVersion, req.IvyVersion)
	if err != nil {
		return err
	}
	if ivy != Ivy260 {
		err := ivysettings.Errorf(errdefs.BadArgument, st.Path,
			"%s: <settings defaultConflictManager=\"nearest\">: the nearest conflict manager is Ivy 2.6.0's (IVY-813); Ivy %s, followed here, has none (follow Ivy 2.6.0, or remove it)",
			st.ConflictAt, ivy)
		return errdefs.Optionf(errdefs.BadArgument, "resolver.Request.IvyVersion", "%w", err)
	}
	return nil
}
