// Package maven reads Maven POMs the way Apache Ivy 2.5.1's PomModuleDescriptorParser
// does (Spark 3.5's --packages resolution): parent chains, properties and
// interpolation, dependencyManagement, BOM import, relocation and profiles.
//
// It imports nothing from the resolver: POMs are fetched through the small
// Fetcher interface. It owns the only POM readers of the project: parse
// (the full model, below) and Peek (a cheap literal reading for prefetch).
package maven

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrMalformed is matched (errors.Is) by every "this POM cannot be read" error.
var ErrMalformed = errors.New("malformed POM")

// The POM elements the model reads, and nothing else: everything else
// (build, reporting, repositories, …) is skipped by the decoder unread.
// Values are as written (untrimmed, not interpolated). Pointers mark the
// elements whose presence matters (an empty <parent/> is a parent).
// encoding/xml semantics apply: a repeated element sets a field again (the
// last one wins), repeated lists append.
type project struct {
	Parent                 *parent                 `xml:"parent"`
	GroupID                string                  `xml:"groupId"`
	ArtifactID             string                  `xml:"artifactId"`
	Version                string                  `xml:"version"`
	Packaging              string                  `xml:"packaging"`
	Properties             properties              `xml:"properties"`
	DependencyManagement   dependencyManagement    `xml:"dependencyManagement"`
	Dependencies           []pomDependency         `xml:"dependencies>dependency"`
	Profiles               []profile               `xml:"profiles>profile"`
	DistributionManagement *distributionManagement `xml:"distributionManagement"`
}

type parent struct {
	GroupID    string `xml:"groupId"`
	ArtifactID string `xml:"artifactId"`
	Version    string `xml:"version"`
}

type dependencyManagement struct {
	Dependencies []pomDependency `xml:"dependencies>dependency"`
}

// pomDependency is a <dependency>, in <dependencies> or in
// <dependencyManagement>.
type pomDependency struct {
	GroupID    string         `xml:"groupId"`
	ArtifactID string         `xml:"artifactId"`
	Version    string         `xml:"version"`
	Type       string         `xml:"type"`
	Classifier string         `xml:"classifier"`
	Scope      string         `xml:"scope"`
	Exclusions []pomExclusion `xml:"exclusions>exclusion"`
	Optional   string         `xml:"optional"`
}

type pomExclusion struct {
	GroupID    string `xml:"groupId"`
	ArtifactID string `xml:"artifactId"`
}

type distributionManagement struct {
	Relocation *relocation `xml:"relocation"`
}

type relocation struct {
	GroupID    string `xml:"groupId"`
	ArtifactID string `xml:"artifactId"`
	Version    string `xml:"version"`
}

type profile struct {
	Activation           *activation          `xml:"activation"`
	Properties           properties           `xml:"properties"`
	DependencyManagement dependencyManagement `xml:"dependencyManagement"`
	Dependencies         []pomDependency      `xml:"dependencies>dependency"`
}

// activation is a profile's <activation>. ActiveByDefault is decoded as
// encoding/xml decodes a bool (strconv.ParseBool after trimming): a value
// it cannot parse makes the POM malformed.
type activation struct {
	ActiveByDefault bool                `xml:"activeByDefault"`
	JDK             *string             `xml:"jdk"`
	OS              *activationOS       `xml:"os"`
	Property        *activationProperty `xml:"property"`
	File            *activationFile     `xml:"file"`
}

type activationOS struct {
	Name    *string `xml:"name"`
	Family  *string `xml:"family"`
	Arch    *string `xml:"arch"`
	Version *string `xml:"version"`
}

type activationProperty struct {
	Name  string `xml:"name"`
	Value string `xml:"value"`
}

type activationFile struct {
	Missing string `xml:"missing"`
	Exists  string `xml:"exists"`
}

// property is one <properties> entry: the element's local name and its
// own character data (not that of nested elements).
type property struct{ Name, Value string }

// properties is a <properties> block in document order, one entry per name
// (a repeated name keeps its place and takes its last value). A later
// <properties> block replaces an earlier one.
type properties []property

// UnmarshalXML implements xml.Unmarshaler.
func (p *properties) UnmarshalXML(d *xml.Decoder, _ xml.StartElement) error {
	var e struct {
		XMLName xml.Name
		Value   string `xml:",chardata"`
	}
	out := properties{}
	idx := map[string]int{}
	for {
		err := d.Decode(&e)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if i, ok := idx[e.XMLName.Local]; ok {
			out[i].Value = e.Value
			continue
		}
		idx[e.XMLName.Local] = len(out)
		out = append(out, property{e.XMLName.Local, e.Value})
	}
	*p = out
	return nil
}

// newDecoder is the one XML decoder configuration for POMs: the charsets
// real POMs use (many, Debian's among them, are ISO-8859-1) and the
// DOCTYPE/HTML entities Ivy 2.5.1 expands.
func newDecoder(data []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charsetReader
	d.Entity = xml.HTMLEntity
	return d
}

// isRoot reports whether name is a POM's root element: <project>, or
// <model>, which Ivy also accepts.
func isRoot(local string) bool { return local == "project" || local == "model" }

// parse decodes one POM into the elements the model reads.
func parse(data []byte) (*project, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: empty document", ErrMalformed)
	}
	var p project
	d := newDecoder(data)
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if !isRoot(se.Name.Local) {
				return nil, fmt.Errorf("%w: root element <%s>, want <project>", ErrMalformed, se.Name.Local)
			}
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
