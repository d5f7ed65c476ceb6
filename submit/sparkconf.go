package submit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/atomicfile"
	"github.com/prebake/prebake/internal/javaprops"
)

// PropsFile is a parsed Java properties file (java.util.Properties.load), as
// spark-submit reads --properties-file and spark-defaults.conf.
type PropsFile struct {
	Path    string
	data    []byte
	entries []javaprops.Entry
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
		b.Write(p.data[last:e.Start])
		last = e.End
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

// parseProps parses data as java.util.Properties.load does (javaprops).
func parseProps(data []byte) *PropsFile {
	entries, err := javaprops.Parse(data)
	return &PropsFile{data: data, entries: entries, err: err}
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
