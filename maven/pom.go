// Package maven reads Maven POMs the way Apache Ivy 2.5.1's PomModuleDescriptorParser
// does (Spark 3.5's --packages resolution): parent chains, properties and
// interpolation, dependencyManagement, BOM import, relocation and profiles.
//
// It imports nothing from the resolver: POMs are fetched through the small
// Fetcher interface.
package maven

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/vifraa/gopom"
)

// ErrMalformed is matched (errors.Is) by every "this POM cannot be read" error.
var ErrMalformed = errors.New("malformed POM")

// Parse decodes one POM.
//
// It uses gopom's model, but not gopom.ParseFromReader: that calls
// xml.Unmarshal with no CharsetReader (many real POMs, Debian's among them,
// are ISO-8859-1) and no entity table (Ivy 2.5.1 expands DOCTYPE/HTML
// entities). Ivy also accepts a <model> root element.
func Parse(data []byte) (*gopom.Project, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: empty document", ErrMalformed)
	}
	var p gopom.Project
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charsetReader
	d.Entity = xml.HTMLEntity
	// gopom's Project insists on a <project> root; decode the root element
	// ourselves so that <model> (accepted by Ivy) works too.
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "project" && se.Name.Local != "model" {
				return nil, fmt.Errorf("%w: root element <%s>, want <project>", ErrMalformed, se.Name.Local)
			}
			se.Name.Local = "project"
			if err := d.DecodeElement(&p, &se); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
			}
			break
		}
	}
	// Anything after the root must be whitespace, comments or PIs.
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if _, ok := tok.(xml.StartElement); ok {
			return nil, fmt.Errorf("%w: content after the root element", ErrMalformed)
		}
	}
	return &p, nil
}

func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "iso-8859-15", "windows-1252", "cp1252":
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		for _, c := range b {
			out.WriteRune(rune(c))
		}
		return &out, nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", label)
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}
