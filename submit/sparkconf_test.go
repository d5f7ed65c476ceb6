package submit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParsePropsEscapes follows java.util.Properties.loadConvert: \uXXXX
// yields UTF-16 code units (a surrogate pair is one character), and a
// malformed \uxxxx throws IllegalArgumentException("Malformed \uxxxx
// encoding."), which Utils.getPropertiesFromFile does not catch: spark-submit
// fails, so reading the file is an error here too.
func TestParsePropsEscapes(t *testing.T) {
	p := parseProps([]byte("spark.app.name=\\uD83D\\uDE00 x\\u00e9\nk\\:ey = v\\\\\n"))
	if got, _ := p.Get("spark.app.name"); got != "\U0001F600 x\u00e9" {
		t.Errorf("surrogate pair: got %q", got)
	}
	if got, _ := p.Get("k:ey"); got != `v\` {
		t.Errorf("escaped separator: got %q", got)
	}
	dir := t.TempDir()
	for _, bad := range []string{"spark.jars.packages=\\u00zz\n", "a=\\u12\n", "\\uXYZW=b\n"} {
		f := filepath.Join(dir, "bad.conf")
		if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readProps(f); err == nil || !strings.Contains(err.Error(), "uxxxx") {
			t.Errorf("readProps(%q) = %v; want a malformed \\uxxxx error", bad, err)
		}
	}
}
