package cachedir

import (
	"path/filepath"
	"strconv"
)

// The directories of a user's cache (Layout), slash-separated and
// relative to its root. Every package that reads or writes the cache
// reaches them through Layout; a prune walks them by these names.
const (
	DirBlobs          = "blobs/sha256"         // jars, POMs, metadata and wheels, named by their sha256
	DirIndex          = "index"                // a URL's blob: index/<h[:2]>/<h>, h = sha256(URL)
	DirTmp            = "tmp"                  // downloads in progress
	DirLocks          = "locks"                // the download locks
	DirStamps         = "stamps"               // the stamps of hashed blobs, one directory per uid
	DirSignatures     = "signatures/sha256"    // verified signatures: <sha256 of the jar>.asc
	DirRetrieve       = "retrieve"             // a lock's jars by file name: retrieve/<lock hash>/
	DirRewrite        = "rewrite"              // the rewrite's edited properties files
	DirLayers         = "layers"               // the layer cache
	DirLayerBlobs     = "layers/blobs/sha256"  // the layer cache's blobs
	DirPython         = "python"               // the Python half's memo of pip's default index
	DirSitePackages   = "python/site-packages" // a lock's wheels merged: site-packages/<wheels key>/
	DirPythonArchives = "python/archives"      // the same as one archive: archives/<wheels key>/
)

// NoDigest is the name a Layout gives, under a directory of digests, to a
// key that is not a sha256 digest (hostile input: a tampered index entry,
// a malformed lock). No blob is written under it, so reading it fails as a
// missing blob does, and the path never leaves the cache.
const NoDigest = "not-a-sha256"

// Layout is the on-disk layout of the user's cache in a cache directory:
// every path it gives is under Root, and a key (a sha256) that could come
// from hostile input is checked to be a digest before it names a file.
// Layout creates nothing.
type Layout struct{ root string }

// At is the layout of the user's cache in the cache directory dir (Root:
// dir itself, or dir/u<uid> in a shared cache directory). dir is the one
// to use, already defaulted; "" gives paths relative to the working
// directory, as filepath.Join does.
func At(dir string) Layout { return Layout{root: Root(dir)} }

// Root is the user's cache.
func (l Layout) Root() string { return l.root }

// Dir is the directory rel (one of the Dir* names) of the cache.
func (l Layout) Dir(rel string) string { return filepath.Join(l.root, filepath.FromSlash(rel)) }

// Blob is the file of the blob whose sha256 is sum (hex).
func (l Layout) Blob(sum string) string { return filepath.Join(l.Dir(DirBlobs), digest(sum)) }

// Stamps is the stamp directory of the user uid.
func (l Layout) Stamps(uid int) string {
	return filepath.Join(l.Dir(DirStamps), strconv.Itoa(uid))
}

// Signature is the verified signature of the jar whose sha256 is sum.
func (l Layout) Signature(sum string) string {
	return filepath.Join(l.Dir(DirSignatures), digest(sum)+".asc")
}

// SitePackages is the site-packages tree of the wheels whose key (a
// sha256 of their names and digests) is key.
func (l Layout) SitePackages(key string) string {
	return filepath.Join(l.Dir(DirSitePackages), digest(key))
}

// PythonArchive is the directory of the site-packages archive of the
// wheels whose key is key.
func (l Layout) PythonArchive(key string) string {
	return filepath.Join(l.Dir(DirPythonArchives), digest(key))
}

// digest is s when it is a sha256 digest (64 hex digits), else NoDigest.
func digest(s string) string {
	if len(s) != 64 {
		return NoDigest
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return NoDigest
		}
	}
	return s
}
