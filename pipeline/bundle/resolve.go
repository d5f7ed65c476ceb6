package bundle

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
)

// listedTags is how many candidate tags an ambiguous import names.
const listedTags = 5

// isExportTag reports whether tag has the form Export gives a bundle: a
// lock hash (64 lowercase hex digits).
func isExportTag(tag string) bool { return isHex64(tag) }

// resolveRef gives a registry reference without a tag or digest the tag
// Export would have given it, never "latest": with an existing lock
// (WithExistingLock), that lock's hash; else the repository's only tag of
// the lock-hash form. Several are errdefs.BadArgument naming some, none
// errdefs.NotFound. Other references are returned as they are.
//
// byLock is set when the tag is the existing lock's hash: a missing
// manifest then says so (lockTagMissing).
func resolveRef(ctx context.Context, from string, o *options) (ref string, byLock bool, err error) {
	if KindOf(from) != KindRegistry || layers.HasTagOrDigest(from) {
		return from, false, nil
	}
	repo := strings.TrimSuffix(from, "/")
	if o.existing != "" {
		// A lock that cannot be read is refused later (CheckReplace).
		if data, err := localfile.Read(o.existing, lock.MaxSize); err == nil {
			if lf, err := lock.Parse(o.existing, data); err == nil {
				return repo + ":" + lf.Hash(), true, nil
			}
		}
	}
	tags, err := layers.ListTags(ctx, repo, o.layerOpts...)
	if err != nil {
		return "", false, err
	}
	var found []string
	for _, t := range tags {
		if isExportTag(t) {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 1:
		return repo + ":" + found[0], false, nil
	case 0:
		return "", false, errdefs.Errorf(errdefs.NotFound, "bundle import %s: the repository has no bundle tag (bundle export tags a bundle with its lock hash, 64 hex digits, e.g. %s:<lock-hash>); name a tag or digest", from, repo)
	}
	slices.Sort(found)
	shown := found
	more := ""
	if len(shown) > listedTags {
		shown, more = shown[:listedTags], fmt.Sprintf(" (and %d more)", len(found)-listedTags)
	}
	return "", false, errdefs.Errorf(errdefs.BadArgument, "bundle import %s: the repository holds %d bundles; name one (%s:<lock-hash>), or import over an existing lock whose hash is its tag: %s%s",
		from, len(found), repo, strings.Join(shown, ", "), more)
}

// lockTagMissing explains a missing bundle whose tag came from the
// existing lock (resolveRef).
func lockTagMissing(err error, o *options) error {
	if errdefs.KindOf(err) != errdefs.NotFound {
		return err
	}
	return errdefs.New(errdefs.NotFound, fmt.Errorf("%w (the tag is the hash of the existing lock %s, as bundle export tags; name the bundle's tag or digest to import another lock)", err, o.existing))
}
