package lock

import "context"

// Jars returns the local paths of a lock's artifacts, index for index. It
// is the one notion of "the jars of a set" that the stores share: a bake
// calls it only when some jar must be sent, so a cache hit needs no local
// jars.
type Jars func(ctx context.Context) ([]string, error)

// LocalJars is Jars for paths already at hand.
func LocalJars(paths []string) Jars {
	return func(context.Context) ([]string, error) { return paths, nil }
}
