package cache

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/redact"
)

// Cross-process download locks. Many processes that share one cold cache
// (twenty `prebake resolve` at the top of the hour) would each download
// every POM and jar: the cache stays correct (temp file + rename), but the
// repository sees twenty copies of every request. So a download takes the
// lock of its URL first, a file named like the URL's index entry:
//
//	<dir>/locks/<h[:2]>/<h>.lock      h = sha256(url), flock(2) LOCK_EX
//
// The locks directory is the user's (0700, checked like tmp: see cache.go)
// and the lock files 0600, so no other user can hold one. A lock held for
// longer than lockWaitMax (a hung process of the same user) is given up on:
// the download goes ahead unlocked, as below, and says so.
//
// and looks the URL up again once it holds it: the process that fetched it
// meanwhile has indexed it, so the waiters read the blob instead. The kernel
// drops a flock when its process dies, so a process killed with kill -9
// leaves no stale lock (the empty lock file stays, and is reused). Where
// the lock cannot be taken (a read-only cache, another user's cache, a file
// system without flock) the download goes ahead unlocked, as before: the
// cache stays correct, only the duplicate requests come back.
//
// A 404 is shared the same way, for the processes running at the time
// only: the downloader writes the time of the answer into
//
//	<dir>/locks/<h[:2]>/<h>.404       unix nanoseconds
//
// and a process that opened the cache before that time, or at most
// missingWindow after it, takes it as its own 404 (as if it had asked at
// the same moment: processes started together start a little apart); a
// later process asks again, so a module published since is found.

// lockPoll bounds the wait between two tries of a held lock; waiting polls
// (LOCK_NB) so that a cancelled context ends the wait.
const (
	lockPollMin = 2 * time.Millisecond
	lockPollMax = 50 * time.Millisecond
)

// defaultLockWaitNote is how long a wait for a held lock goes on before it
// is reported (at once under -v: Debugf), and defaultLockWaitMax how long
// before the download goes ahead without the lock (WithLockWait sets both).
const (
	defaultLockWaitNote = 5 * time.Second
	defaultLockWaitMax  = 30 * time.Second
)

// debugLogger is a Logger with a verbose level (*progress.Reporter).
type debugLogger interface {
	Debugf(format string, args ...any)
}

// lockURL takes url's download lock, waiting while another process holds
// it, for the lock wait's maximum at most (WithLockWait). The returned unlock is never nil; err is
// ctx's error when the wait was cancelled.
func (c *Cache) LockURL(ctx context.Context, url string) (unlock func(), err error) {
	if c.Locks == "" {
		return func() {}, nil // no lock: download unlocked (see above)
	}
	path := c.LockPath(url) + ".lock"
	f, err := OpenLockFile(path)
	if err != nil {
		return func() {}, nil
	}
	start := time.Now()
	noted := false
	wait := lockPollMin
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return func() {}, nil
		}
		if ok {
			return func() { unlockFile(f); f.Close() }, nil
		}
		if wait == lockPollMin {
			if d, ok := c.log.(debugLogger); ok {
				d.Debugf("waiting for the download lock of %s (%s), held by another process", redact.URL(url), path)
			}
		}
		switch waited := time.Since(start); {
		case waited >= c.lockWaitMax:
			c.log.Printf("warning: the download lock of %s (%s) is still held by another process after %s; downloading without it", redact.URL(url), path, c.lockWaitMax)
			f.Close()
			return func() {}, nil
		case waited >= c.lockWaitNote && !noted:
			noted = true
			c.log.Printf("waiting for the download lock of %s (%s), held by another process for %s now; giving up after %s", redact.URL(url), path, waited.Round(time.Second), c.lockWaitMax)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return func() {}, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, lockPollMax)
	}
}

// missingPath is where url's last 404 is recorded.
func (c *Cache) missingPath(url string) string { return c.LockPath(url) + ".404" }

// lockPath is url's path under <dir>/locks, without extension ("" without
// a usable locks directory).
func (c *Cache) LockPath(url string) string {
	if c.Locks == "" {
		return ""
	}
	p := c.IndexPath(url)
	return filepath.Join(c.Locks, filepath.Base(filepath.Dir(p)), filepath.Base(p))
}

// seenMissing reports whether another process got a 404 for url since this
// one opened the cache.
func (c *Cache) SeenMissing(url string) bool {
	if c.Locks == "" {
		return false
	}
	data, err := os.ReadFile(c.missingPath(url))
	if err != nil {
		return false
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return err == nil && ns >= c.Opened.Add(-MissingWindow).UnixNano()
}

// missingWindow is how long before a process opened the cache another
// process's 404 still counts as its own.
const MissingWindow = 10 * time.Second

// recordMissing records a 404 for url now (best effort).
func (c *Cache) RecordMissing(url string) {
	if c.Locks == "" {
		return
	}
	_ = c.WriteAtomic(c.missingPath(url), []byte(strconv.FormatInt(time.Now().UnixNano(), 10)+"\n"))
}
