package submit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/atomicfile"
)

// A propsEntry is one logical line of a Java properties file that holds a
// key (comments and blank lines are kept as raw text around entries).
type propsEntry struct {
	Key, Value string
	start, end int // byte range of the logical line, terminator included
}

// PropsFile is a parsed Java properties file (java.util.Properties.load), as
// spark-submit reads --properties-file and spark-defaults.conf.
type PropsFile struct {
	Path    string
	data    []byte
	entries []propsEntry
	err     error // the first line Properties.load would reject
}

// Get returns the value of key as Spark sees it: the last definition wins
// and the value is trimmed (Utils.getPropertiesFromFile).
func (p *PropsFile) Get(key string) (string, bool) {
	if p == nil {
		return "", false
	}
	for i := len(p.entries) - 1; i >= 0; i-- {
		if p.entries[i].Key == key {
			return trimSpark(p.entries[i].Value), true
		}
	}
	return "", false
}

// Has reports whether key is defined.
func (p *PropsFile) Has(key string) bool { _, ok := p.Get(key); return ok }

// Keys returns the defined keys in file order, each once.
func (p *PropsFile) Keys() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range p.entries {
		if !seen[e.Key] {
			seen[e.Key] = true
			out = append(out, e.Key)
		}
	}
	return out
}

// Without returns the file's bytes with every logical line defining one of
// keys removed; everything else (comments, order, escapes) is kept byte for
// byte.
func (p *PropsFile) Without(keys map[string]bool) []byte {
	var b bytes.Buffer
	last := 0
	for _, e := range p.entries {
		if !keys[e.Key] {
			continue
		}
		b.Write(p.data[last:e.start])
		last = e.end
	}
	b.Write(p.data[last:])
	return b.Bytes()
}

// trimSpark is Spark's Utils.trimExceptCRLF: trim characters <= ' ' except
// CR and LF.
func trimSpark(s string) string {
	cut := func(r rune) bool { return r <= ' ' && r != '\r' && r != '\n' }
	return strings.TrimFunc(s, cut)
}

// readProps reads and parses a properties file as UTF-8 (Spark reads them
// with an UTF-8 reader). A missing file matches fs.ErrNotExist.
func readProps(path string) (*PropsFile, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("properties file %s is not a normal file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := parseProps(data)
	if p.err != nil {
		return nil, fmt.Errorf("properties file %s: %w", path, p.err)
	}
	p.Path = path
	return p, nil
}

// PropsMap reads a properties file and returns every key with the value
// Spark sees (the last definition, trimmed). Errors name the file.
func PropsMap(path string) (map[string]string, error) {
	p, err := readProps(path)
	if err != nil {
		return nil, fmt.Errorf("reading properties file %s: %w", path, err)
	}
	m := make(map[string]string, len(p.entries))
	for _, k := range p.Keys() {
		m[k], _ = p.Get(k)
	}
	return m, nil
}

// parseProps parses Java properties syntax: logical lines joined by a
// trailing odd run of backslashes, # and ! comments, key terminated by an
// unescaped '=', ':' or whitespace, \uXXXX and \t \n \r \f escapes.
func parseProps(data []byte) *PropsFile {
	p := &PropsFile{data: data}
	i := 0
	n := len(data)
	for i < n {
		start := i
		// Skip leading whitespace of the natural line.
		j := i
		for j < n && isPropsSpace(data[j]) {
			j++
		}
		if j >= n {
			break
		}
		if data[j] == '\n' || data[j] == '\r' {
			i = propsLineEnd(data, j)
			continue
		}
		if data[j] == '#' || data[j] == '!' {
			i = propsLineEnd(data, j)
			continue
		}
		// Gather the logical line.
		var logical []byte
		k := j
		for {
			e := k
			for e < n && data[e] != '\n' && data[e] != '\r' {
				e++
			}
			seg := data[k:e]
			bs := 0
			for x := len(seg) - 1; x >= 0 && seg[x] == '\\'; x-- {
				bs++
			}
			next := propsLineEnd(data, e)
			if bs%2 == 1 && next <= n && e < n {
				logical = append(logical, seg[:len(seg)-1]...)
				k = next
				for k < n && isPropsSpace(data[k]) {
					k++
				}
				continue
			}
			if bs%2 == 1 {
				// A trailing backslash at EOF is dropped by Properties.load.
				seg = seg[:len(seg)-1]
			}
			logical = append(logical, seg...)
			i = next
			break
		}
		key, val, err := splitProp(logical)
		if err != nil && p.err == nil {
			p.err = fmt.Errorf("line %d: %w", bytes.Count(data[:start], []byte("\n"))+1, err)
		}
		p.entries = append(p.entries, propsEntry{Key: key, Value: val, start: start, end: i})
	}
	return p
}

func isPropsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// propsLineEnd returns the index after the line terminator at or after i.
func propsLineEnd(data []byte, i int) int {
	for i < len(data) && data[i] != '\n' && data[i] != '\r' {
		i++
	}
	if i < len(data) && data[i] == '\r' {
		i++
		if i < len(data) && data[i] == '\n' {
			i++
		}
		return i
	}
	if i < len(data) {
		i++
	}
	return i
}

func splitProp(line []byte) (string, string, error) {
	keyLen := 0
	valStart := len(line)
	hasSep := false
	escaped := false
	for keyLen < len(line) {
		c := line[keyLen]
		if (c == '=' || c == ':') && !escaped {
			valStart = keyLen + 1
			hasSep = true
			break
		}
		if isPropsSpace(c) && !escaped {
			valStart = keyLen + 1
			break
		}
		if c == '\\' {
			escaped = !escaped
		} else {
			escaped = false
		}
		keyLen++
	}
	for valStart < len(line) {
		c := line[valStart]
		if !isPropsSpace(c) {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valStart++
	}
	key, err := unescapeProp(line[:keyLen])
	if err != nil {
		return "", "", err
	}
	val, err := unescapeProp(line[min(valStart, len(line)):])
	return key, val, err
}

// errMalformedU is java.util.Properties.loadConvert's failure on a \u
// escape without four hex digits; Utils.getPropertiesFromFile lets it
// through, so spark-submit fails on such a file.
var errMalformedU = errors.New("malformed \\uxxxx encoding (java.util.Properties rejects it, and so does spark-submit)")

// unescapeProp is Properties.loadConvert: \t \n \r \f, \uXXXX as UTF-16
// code units (a surrogate pair is one character), any other escaped
// character as itself.
func unescapeProp(b []byte) (string, error) {
	if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b), nil
	}
	var s strings.Builder
	var units []uint16 // pending \u code units
	flush := func() {
		if len(units) > 0 {
			s.WriteString(string(utf16.Decode(units)))
			units = units[:0]
		}
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			flush()
			s.WriteByte(c)
			continue
		}
		i++
		c = b[i]
		if c == 'u' {
			if i+5 > len(b) {
				return "", errMalformedU
			}
			v, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 16)
			if err != nil {
				return "", errMalformedU
			}
			units = append(units, uint16(v))
			i += 4
			continue
		}
		flush()
		switch c {
		case 't':
			s.WriteByte('\t')
		case 'n':
			s.WriteByte('\n')
		case 'r':
			s.WriteByte('\r')
		case 'f':
			s.WriteByte('\f')
		default:
			s.WriteByte(c)
		}
	}
	flush()
	return s.String(), nil
}

// sparkDefaultsPath returns the spark-defaults.conf spark-submit would read
// (Utils.getDefaultPropertiesFile): $SPARK_CONF_DIR, else $SPARK_HOME/conf;
// "" when it is not a regular file.
func sparkDefaultsPath(getenv func(string) string) string {
	return DefaultsFileIn(SparkConfDir(getenv))
}

// SparkConfDir is the directory spark-submit reads spark-defaults.conf
// from: $SPARK_CONF_DIR, else $SPARK_HOME/conf, else "" (none).
func SparkConfDir(getenv func(string) string) string {
	if dir := getenv("SPARK_CONF_DIR"); dir != "" {
		return dir
	}
	if home := getenv("SPARK_HOME"); home != "" {
		return filepath.Join(home, "conf")
	}
	return ""
}

// DefaultsFileIn is the absolute path of dir/spark-defaults.conf when it
// is a regular file (Utils.getDefaultPropertiesFile: isFile), else "".
func DefaultsFileIn(dir string) string {
	if dir == "" {
		return ""
	}
	p := filepath.Join(dir, "spark-defaults.conf")
	if info, err := os.Stat(p); err != nil || !info.Mode().IsRegular() {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// writeEditedProps writes data to workDir under a content-addressed name
// (atomically) and returns its path.
func writeEditedProps(workDir, orig string, data []byte) (string, error) {
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("rewrite work dir %s: %w", workDir, err))
	}
	base := strings.TrimSuffix(filepath.Base(orig), filepath.Ext(orig))
	path := filepath.Join(workDir, fmt.Sprintf("%s-%s%s", base, propsHash(data), filepath.Ext(orig)))
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("writing edited copy of %s: %w", orig, err))
	}
	return path, nil
}

func propsHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
