package resolver

import (
	"context"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/resolver/ivysettings"
)

// ivySettingsConflict applies an Ivy settings file's conflict manager:
// <settings defaultConflictManager="nearest"> is Ivy 2.6.0's Maven-style
// manager (IVY-813), which the request then follows as ConflictNearest
// (recorded in the lock's inputs.conflict). Under Ivy 2.5, which has no
// such manager, it is refused (errdefs.BadArgument) naming the file and
// line, before any request.
func ivySettingsConflict(ctx context.Context, req Request) (Request, error) {
	if req.IvySettings == "" {
		return req, nil
	}
	st, err := ivysettings.Load(ctx, req.IvySettings, ivysettings.JVMEnv(req.Home))
	if err != nil {
		return req, err
	}
	if st.ConflictManager != ivysettings.ConflictNearest {
		return req, nil
	}
	ivy, err := EffectiveIvy(req.SparkVersion, req.IvyVersion)
	if err != nil {
		return req, err
	}
	if ivy != Ivy260 {
		err := ivysettings.Errorf(errdefs.BadArgument, st.Path,
			"%s: <settings defaultConflictManager=\"nearest\">: the nearest conflict manager is Ivy 2.6.0's (IVY-813); Ivy %s, followed here, has none (follow Ivy 2.6.0, or remove it)",
			st.ConflictAt, ivy)
		return req, errdefs.Optionf(errdefs.BadArgument, "resolver.Request.IvyVersion", "%w", err)
	}
	req.Conflict = ConflictNearest
	return req, nil
}
