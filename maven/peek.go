package maven

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Hints are what Peek reads from one POM: its own elements as written
// (trimmed, not interpolated), outside profiles, without its parents. They
// are guesses for prefetching (what the effective model will probably
// need), never the model: only a Loader applies Ivy's rules.
type Hints struct {
	// Parent is <parent>; nil when the POM has none.
	Parent *Coord
	// Packaging is <packaging>, "" when absent.
	Packaging string
	// Properties are <properties>, read as the model reads them: a
	// repeated name takes its last value, a later <properties> block
	// replaces an earlier one.
	Properties map[string]string
	// Dependencies are <dependencies>, in order, every scope.
	Dependencies []DependencyHint
	// Managed are the <dependencyManagement> entries, in order, imports
	// (Scope "import") included.
	Managed []DependencyHint
}

// DependencyHint is a <dependency> as written: Version may be empty
// (managed) or hold ${…}; Scope and Optional are as written too.
type DependencyHint struct {
	Coord
	Scope, Optional string
}

// peekDepth is the deepest element Peek reads:
// project/dependencyManagement/dependencies/dependency/version.
const peekDepth = 5

// Peek reads a POM's Hints in one pass over its tokens, without building
// the model: it is cheap enough to run on every POM as it arrives. It
// decodes as the model does (charsets, entities, a <project> or <model>
// root); a document the XML decoder rejects, or whose root is not a POM,
// is an error matching ErrMalformed. Its memory is linear in the POM's
// size; it expands nothing.
func Peek(data []byte) (Hints, error) {
	var (
		h Hints
		// path holds the names of the open elements down to peekDepth
		// (path[0] is the root); depth counts them all.
		path  [peekDepth]string
		depth int
		// text is the character data directly inside the element at
		// textDepth (0: no element of interest is open).
		text      []byte
		textDepth int
		parent    DependencyHint // only its Coord is kept
		hasParent bool
		dep       DependencyHint
		seenRoot  bool
	)
	d := newDecoder(data)
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Hints{}, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if seenRoot {
					return Hints{}, fmt.Errorf("%w: content after the root element", ErrMalformed)
				}
				seenRoot = true
				if !isRoot(t.Name.Local) {
					return Hints{}, fmt.Errorf("%w: root element <%s>, want <project>", ErrMalformed, t.Name.Local)
				}
				h.Properties = map[string]string{}
			}
			if depth < peekDepth {
				path[depth] = t.Name.Local
			}
			depth++
			switch p := path[1:min(depth, peekDepth)]; {
			case depth == 2 && p[0] == "parent":
				hasParent = true
			case depth == 2 && p[0] == "properties":
				clear(h.Properties)
			case depth == 3 && p[0] == "dependencies" && p[1] == "dependency",
				depth == 4 && p[0] == "dependencyManagement" && p[1] == "dependencies" && p[2] == "dependency":
				dep = DependencyHint{}
			case depth == 2 && p[0] == "packaging",
				depth == 3 && (p[0] == "parent" || p[0] == "properties"),
				depth == 4 && p[0] == "dependencies" && p[1] == "dependency",
				depth == 5 && p[0] == "dependencyManagement" && p[1] == "dependencies" && p[2] == "dependency":
				text, textDepth = text[:0], depth
			}
		case xml.CharData:
			if depth == textDepth {
				text = append(text, t...)
			}
		case xml.EndElement:
			if depth == 0 || (depth <= peekDepth && t.Name.Local != path[depth-1]) {
				return Hints{}, fmt.Errorf("%w: unexpected </%s>", ErrMalformed, t.Name.Local)
			}
			p := path[1:min(depth, peekDepth)]
			if depth == textDepth {
				v := strings.TrimSpace(string(text))
				switch {
				case depth == 2:
					h.Packaging = v
				case depth == 3 && p[0] == "parent":
					setField(&parent, p[1], v)
				case depth == 3:
					h.Properties[p[1]] = v
				default:
					setField(&dep, p[len(p)-1], v)
				}
				textDepth = 0
			} else if depth == 3 && p[0] == "dependencies" && p[1] == "dependency" {
				h.Dependencies = append(h.Dependencies, dep)
			} else if depth == 4 && p[0] == "dependencyManagement" && p[1] == "dependencies" && p[2] == "dependency" {
				h.Managed = append(h.Managed, dep)
			}
			depth--
		}
	}
	if !seenRoot || depth != 0 {
		return Hints{}, fmt.Errorf("%w: no complete root element", ErrMalformed)
	}
	if hasParent {
		h.Parent = &parent.Coord
	}
	return h, nil
}

// setField sets the field of d that the element field gives.
func setField(d *DependencyHint, field, v string) {
	switch field {
	case "groupId":
		d.Group = v
	case "artifactId":
		d.Artifact = v
	case "version":
		d.Version = v
	case "scope":
		d.Scope = v
	case "optional":
		d.Optional = v
	}
}
