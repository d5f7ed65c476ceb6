package wheel

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// A recordRow is one row of a wheel's RECORD: a member, its hash and size.
type recordRow struct {
	algo string // "sha256", "sha384", "sha512"; "" for RECORD and its signatures
	sum  []byte
	size int64 // -1 when not given
}

// hashes are the RECORD algorithms accepted: sha256 "or better" (the
// binary distribution format refuses md5 and sha1).
var hashes = map[string]func() hash.Hash{"sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New}

// unhashed are the dist-info files RECORD lists without a hash.
func unhashed(name string) bool {
	return name == "RECORD" || name == "RECORD.jws" || name == "RECORD.p7s"
}

// parseRecord reads a RECORD (CSV: path, algo=urlsafe-b64-nopad digest,
// size). distInfo is the dist-info directory: its RECORD and signatures may
// go without a hash; every other row needs one.
func parseRecord(data []byte, distInfo string) (map[string]recordRow, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	rows := map[string]recordRow{}
	for line := 1; ; line++ {
		f, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrRecord, err)
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("%w: line %d has %d fields, want 3", ErrRecord, line, len(f))
		}
		path, digest, size := f[0], f[1], f[2]
		if err := checkMember(path); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if _, dup := rows[path]; dup {
			return nil, fmt.Errorf("%w: line %d: %.200q again", ErrRecord, line, path)
		}
		row := recordRow{size: -1}
		if size != "" {
			if row.size, err = strconv.ParseInt(size, 10, 64); err != nil || row.size < 0 {
				return nil, fmt.Errorf("%w: line %d: size %.40q", ErrRecord, line, size)
			}
		}
		dir, name, _ := strings.Cut(path, "/")
		switch {
		case digest == "" && dir == distInfo && unhashed(name):
		case digest == "":
			return nil, fmt.Errorf("%w: line %d: %.200q has no hash", ErrRecord, line, path)
		default:
			algo, b64, _ := strings.Cut(digest, "=")
			if hashes[algo] == nil {
				return nil, fmt.Errorf("%w: line %d: hash algorithm %.40q, want sha256, sha384 or sha512", ErrRecord, line, algo)
			}
			sum, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(b64, "="))
			if err != nil || len(sum) != hashes[algo]().Size() {
				return nil, fmt.Errorf("%w: line %d: %.200q: a malformed %s digest", ErrRecord, line, path, algo)
			}
			row.algo, row.sum = algo, sum
		}
		rows[path] = row
	}
}

// recordDigest is the RECORD form of a sha256.
func recordDigest(sum []byte) string {
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum)
}

// writeRecord returns the RECORD of the installed files (sorted), the
// RECORD itself last with no hash.
func writeRecord(files []File, self string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	for _, f := range files {
		w.Write([]string{f.Path, recordDigest(f.SHA256[:]), strconv.FormatInt(f.Size, 10)}) //nolint:errcheck // a bytes.Buffer does not fail; Flush reports
	}
	w.Write([]string{self, "", ""}) //nolint:errcheck // as above
	w.Flush()
	return b.Bytes()
}
