package submit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/internal/javaprops"
	"github.com/prebake/prebake/internal/localfile"
)

// PropsFile is a parsed Java properties file (java.util.Properties.load), as
// spark-submit reads --properties-file and spark-defaults.conf.
type PropsFile struct {
	Path    string
	data    []byte
	entries []javaprops.Entry
	// last is the index in entries of each key's last definition (the one
	// Properties.load keeps), so that Get is one lookup: a file of 150,000
	// keys read by SparkConf was quadratic (audit 4, M3).
	last map[string]int
	err  error // the first line Properties.load would reject
}

// Get returns the value of key as Spark sees it: the last definition wins
// and the value is trimmed (Utils.getPropertiesFromFile).
func (p *PropsFile) Get(key string) (string, bool) {
	if p == nil {
		return "", false
	}
	i, ok := p.last[key]
	if !ok {
		return "", false
	}
	return trimSpark(p.entries[i].Value), true
}

// Has reports whether key is defined.
func (p *PropsFile) Has(key string) bool { _, ok := p.Get(key); return ok }

// Keys returns the defined keys in the order of their first definition,
// each once.
func (p *PropsFile) Keys() []string {
	if p == nil {
		return nil
	}
	out := make([]string, 0, len(p.last))
	seen := make(map[string]bool, len(p.last))
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
		b.Write(p.data[last:e.Start])
		last = e.End
	}
	b.Write(p.data[last:])
	return b.Bytes()
}

// Select returns, byte for byte, the logical lines of the entries whose key
// keep accepts, in file order, each ending in a line break (the inverse of
// Without, for entries only).
func (p *PropsFile) Select(keep func(key string) bool) []byte {
	var out []byte
	for _, e := range p.entries {
		if !keep(e.Key) {
			continue
		}
		out = append(out, p.data[e.Start:e.End]...)
		if n := len(out); n > 0 && out[n-1] != '\n' && out[n-1] != '\r' {
			out = append(out, '\n')
		}
	}
	return out
}

// trimSpark is Spark's Utils.trimExceptCRLF: trim characters <= ' ' except
// CR and LF.
func trimSpark(s string) string {
	cut := func(r rune) bool { return r <= ' ' && r != '\r' && r != '\n' }
	return strings.TrimFunc(s, cut)
}

// MaxPropsFileSize bounds a properties file (16 MiB): it must be a regular
// file (a FIFO or /dev/zero is refused before it is read).
const MaxPropsFileSize = 16 << 20

// readProps reads and parses a properties file as UTF-8 (Spark reads them
// with an UTF-8 reader), a regular file of at most MaxPropsFileSize bytes. A
// missing file matches fs.ErrNotExist.
func readProps(path string) (*PropsFile, error) {
	data, err := localfile.Read(path, MaxPropsFileSize)
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

// parseProps parses data as java.util.Properties.load does (javaprops).
func parseProps(data []byte) *PropsFile {
	entries, err := javaprops.Parse(data)
	last := make(map[string]int, len(entries))
	for i, e := range entries {
		last[e.Key] = i
	}
	return &PropsFile{data: data, entries: entries, last: last, err: err}
}

// sparkDefaultsPath returns the spark-defaults.conf spark-submit would read
// (Utils.getDefaultPropertiesFile): $SPARK_CONF_DIR, else $SPARK_HOME/conf;
// "" when it is not a regular file.
func sparkDefaultsPath(getenv func(string) string) string {
	return defaultsFileIn(sparkConfDir(getenv))
}

// sparkConfDir is the directory spark-submit reads spark-defaults.conf
// from: $SPARK_CONF_DIR, else $SPARK_HOME/conf, else "" (none).
func sparkConfDir(getenv func(string) string) string {
	if dir := getenv("SPARK_CONF_DIR"); dir != "" {
		return dir
	}
	if home := getenv("SPARK_HOME"); home != "" {
		return filepath.Join(home, "conf")
	}
	return ""
}

// defaultsFileIn is the absolute path of dir/spark-defaults.conf when it
// is a regular file (Utils.getDefaultPropertiesFile: isFile), else "".
func defaultsFileIn(dir string) string {
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
