package upgrade

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
)

// checkBase bakes the target set on the base into a scratch OCI layout,
// not strict, for the classpath report a strict bake acts on: the
// same code reads the base's jars and compares them. The layout is
// removed; nothing is pushed.
func checkBase(ctx context.Context, in Input, res *resolver.Result, to, scala string) (*BaseCheck, error) {
	tmp, err := os.MkdirTemp("", "prebake-upgrade-")
	if err != nil {
		return nil, errdefs.New(errdefs.CantWrite, err)
	}
	defer os.RemoveAll(tmp)
	r, err := layers.Bake(ctx, layers.BakeInput{
		Lock:   res.Lock,
		Jars:   lock.LocalJars(res.Paths),
		Base:   in.Base,
		Target: "oci:" + filepath.Join(tmp, "image") + ":upgrade-check",
	}, in.BaseOptions...)
	if err != nil {
		return nil, fmt.Errorf("checking the target set against %s: %w", in.Base, err)
	}
	bc := &BaseCheck{Image: in.Base, Shadowed: []layers.Conflict{}, Duplicate: []layers.Conflict{}, Report: r.Report}
	if bc.Report == nil {
		bc.Report = &layers.Report{Conflicts: []layers.Conflict{}, Warnings: []layers.Warning{}}
	}
	for _, c := range bc.Report.Conflicts {
		if c.SameVersion {
			bc.Duplicate = append(bc.Duplicate, c)
		} else {
			bc.Shadowed = append(bc.Shadowed, c)
		}
	}
	return bc, nil
}
