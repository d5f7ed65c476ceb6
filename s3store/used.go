package s3store

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"
)

// Last use of a set. A hit (Bake finding the manifest, SetURLs) records
// used/<lock-hash>/<YYYY-MM-DD> (an empty object, one a day at most per
// reader), so that an age-based GC reads "not used for", not "written
// longer ago than". Recording is best effort: a reader with read-only
// credentials still gets its URLs.

const usedDay = "2006-01-02"

// recordUse marks lockHash as used today. Errors are reported at debug
// level and otherwise ignored.
func (s *Store) recordUse(ctx context.Context, lockHash string) {
	key := s.key("used/" + lockHash + "/" + time.Now().UTC().Format(usedDay))
	if err := s.b.putBytes(ctx, key, nil); err != nil {
		if d, ok := s.o.logger.(debugLogger); ok {
			d.Debugf("set %s: could not record its use (a garbage collection by age may count it as unused): %v", lockHash, err)
		}
	}
}

// lastUses lists used/ and returns, per lock hash, the latest day it was
// used and every marker key.
func (s *Store) lastUses(ctx context.Context) (map[string]time.Time, map[string][]string, error) {
	objs, err := s.b.list(ctx, s.key("used/"))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, nil, err
	}
	last, keys := map[string]time.Time{}, map[string][]string{}
	for _, o := range objs {
		hash, day, ok := strings.Cut(strings.TrimPrefix(o.Key, s.key("used/")), "/")
		if !ok {
			continue
		}
		keys[hash] = append(keys[hash], o.Key)
		t, err := time.Parse(usedDay, day)
		if err != nil {
			continue
		}
		// A day's marker counts as the end of that day.
		if t = t.Add(24*time.Hour - time.Nanosecond); t.After(last[hash]) {
			last[hash] = t
		}
	}
	for _, k := range keys {
		sort.Strings(k)
	}
	return last, keys, nil
}
