// Package sbom turns a prebake lock into a CycloneDX 1.5 JSON SBOM.
//
// The SBOM is a pure function of the lock (and the tool version and
// timestamp passed in), so the same lock gives a byte-identical SBOM:
//   - serialNumber is a name-based (version 5, SHA-1) UUID of the lock hash,
//     so it names the jar set, as the lock hash does everywhere else;
//   - metadata.timestamp is the time given with WithTimestamp, by default
//     1970-01-01T00:00:01Z (the fixed mtime prebake's image layers use);
//     the CLI passes SOURCE_DATE_EPOCH when it is set and non-empty;
//   - components are in the lock's order (sorted by file name): a jar as a
//     pkg:maven component, a wheel as a pkg:pypi one (PypiPURL).
package sbom

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/lock"
)

// DefaultTimestamp is metadata.timestamp unless WithTimestamp says otherwise.
var DefaultTimestamp = time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC)

// BOM is the subset of a CycloneDX 1.5 BOM that prebake writes.
type BOM struct {
	Schema       string      `json:"$schema"`
	BOMFormat    string      `json:"bomFormat"`
	SpecVersion  string      `json:"specVersion"`
	SerialNumber string      `json:"serialNumber"`
	Version      int         `json:"version"`
	Metadata     Metadata    `json:"metadata"`
	Components   []Component `json:"components"`
}

// Metadata is the BOM's metadata.
type Metadata struct {
	Timestamp  string     `json:"timestamp"`
	Tools      Tools      `json:"tools"`
	Component  Component  `json:"component"`
	Properties []Property `json:"properties,omitempty"`
}

// Tools lists the tools that made the BOM (the 1.5 object form).
type Tools struct {
	Components []Component `json:"components"`
}

// Component is a CycloneDX component.
type Component struct {
	Type               string              `json:"type"`
	BOMRef             string              `json:"bom-ref,omitempty"`
	Group              string              `json:"group,omitempty"`
	Name               string              `json:"name"`
	Version            string              `json:"version,omitempty"`
	Hashes             []Hash              `json:"hashes,omitempty"`
	PURL               string              `json:"purl,omitempty"`
	ExternalReferences []ExternalReference `json:"externalReferences,omitempty"`
	Properties         []Property          `json:"properties,omitempty"`
}

// Hash is a CycloneDX hash.
type Hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

// ExternalReference is a CycloneDX external reference.
type ExternalReference struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Property is a CycloneDX name/value property.
type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type options struct {
	timestamp   time.Time
	toolVersion string
}

// Option configures New.
type Option func(*options) error

// WithTimestamp sets metadata.timestamp. The default is DefaultTimestamp.
func WithTimestamp(t time.Time) Option { return func(o *options) error { o.timestamp = t; return nil } }

// WithToolVersion sets the version of the prebake tool entry. The default
// is "unknown".
func WithToolVersion(v string) Option {
	return func(o *options) error { o.toolVersion = v; return nil }
}

// New builds the SBOM of lock. Errors (a malformed coordinate) carry
// errdefs.Invalid; an option's error is returned as it is.
func New(lf *lock.File, opts ...Option) (*BOM, error) {
	o := options{timestamp: DefaultTimestamp, toolVersion: "unknown"}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	hash := lf.Hash()
	b := &BOM{
		Schema:       "http://cyclonedx.org/schema/bom-1.5.schema.json",
		BOMFormat:    "CycloneDX",
		SpecVersion:  "1.5",
		SerialNumber: "urn:uuid:" + uuidV5(namespaceURL, "urn:prebake:lock:"+hash),
		Version:      1,
		Metadata: Metadata{
			Timestamp: o.timestamp.UTC().Format(time.RFC3339),
			Tools: Tools{Components: []Component{{
				Type:    "application",
				Name:    "prebake",
				Version: o.toolVersion,
				ExternalReferences: []ExternalReference{
					{Type: "vcs", URL: "https://github.com/prebake/prebake"},
				},
			}}},
			Component: Component{
				Type:    "application",
				BOMRef:  "prebake-lock:" + hash,
				Name:    "prebake-lock",
				Version: hash,
			},
			Properties: inputProperties(lf, hash),
		},
		Components: []Component{},
	}
	for _, a := range lf.Artifacts { // every kind
		c, err := component(a)
		if err != nil {
			return nil, err
		}
		b.Components = append(b.Components, c)
	}
	return b, nil
}

// Marshal returns the stable, indented JSON form with a trailing newline.
func (b *BOM) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func inputProperties(lf *lock.File, hash string) []Property {
	ps := []Property{
		{Name: "prebake:lockHash", Value: hash},
		{Name: "prebake:inputsHash", Value: lock.ComputeInputsHash(lf.Inputs)},
		{Name: "prebake:conflict", Value: string(lf.Inputs.Conflict)},
	}
	for _, p := range lf.Inputs.Packages {
		ps = append(ps, Property{Name: "prebake:package", Value: p})
	}
	for _, r := range lf.Inputs.Repositories {
		ps = append(ps, Property{Name: "prebake:repository", Value: redact.URL(r)})
	}
	for _, e := range lf.Inputs.Excludes {
		ps = append(ps, Property{Name: "prebake:exclude", Value: e})
	}
	if py := lf.Inputs.Python; py != nil {
		ps = append(ps, Property{Name: "prebake:python:version", Value: py.Version})
		for _, r := range py.Requirements {
			ps = append(ps, Property{Name: "prebake:python:requirement", Value: r})
		}
		for _, ix := range py.Indexes {
			ps = append(ps, Property{Name: "prebake:python:index", Value: redact.URL(ix)})
		}
		for _, pl := range py.Platforms {
			ps = append(ps, Property{Name: "prebake:python:platform", Value: pl})
		}
	}
	return ps
}

func component(a lock.Artifact) (Component, error) {
	switch {
	case a.Kind == lock.KindWheel:
		return wheelComponent(a), nil
	case !a.IsJar():
		return Component{}, errdefs.New(errdefs.Invalid, fmt.Errorf("artifact %q: %w: %q", a.File, lock.ErrUnsupportedKind, a.Kind))
	}
	p := strings.Split(a.Coord, ":")
	if len(p) != 3 && len(p) != 4 {
		return Component{}, errdefs.Errorf(errdefs.Invalid, "artifact %q: coordinate %q: want group:artifact:version[:classifier]", a.File, a.Coord)
	}
	for _, x := range p {
		if x == "" {
			return Component{}, errdefs.Errorf(errdefs.Invalid, "artifact %q: coordinate %q: empty part", a.File, a.Coord)
		}
	}
	g, n, v, cl := p[0], p[1], p[2], ""
	if len(p) == 4 {
		cl = p[3]
	}
	ext := strings.TrimPrefix(path.Ext(a.File), ".")
	if ext == "" {
		ext = "jar"
	}
	purl := PURL(g, n, v, cl, ext)
	c := Component{
		Type:       "library",
		BOMRef:     purl,
		Group:      g,
		Name:       n,
		Version:    v,
		Hashes:     []Hash{{Alg: "SHA-256", Content: strings.ToLower(a.Sha256)}},
		PURL:       purl,
		Properties: []Property{{Name: "prebake:file", Value: a.File}},
	}
	if u := distributionURL(a.Repository, g, n, v, cl, ext); u != "" {
		c.ExternalReferences = []ExternalReference{{Type: "distribution", URL: u}}
	}
	return c, nil
}

// wheelComponent is a wheel's component: its PyPI package URL, its sha256,
// the wheel file and the index it came from (without userinfo) as
// properties. The index serves the file at a URL the lock does not record,
// so there is no distribution reference.
func wheelComponent(a lock.Artifact) Component {
	purl := PypiPURL(a.Name, a.Version)
	c := Component{
		Type:       "library",
		BOMRef:     purl,
		Name:       a.Name,
		Version:    a.Version,
		Hashes:     []Hash{{Alg: "SHA-256", Content: strings.ToLower(a.Sha256)}},
		PURL:       purl,
		Properties: []Property{{Name: "prebake:file", Value: a.File}},
	}
	if a.Repository != "" {
		c.Properties = append(c.Properties, Property{Name: "prebake:index", Value: redact.URL(a.Repository)})
	}
	return c
}

// PypiPURL is the package URL of a Python package, per the purl spec's
// pypi type: pkg:pypi/<name>@<version>, the name PEP 503 normalized (as a
// lock records it).
func PypiPURL(name, version string) string {
	return "pkg:pypi/" + escape(lock.NormalizeProject(name)) + "@" + escape(version)
}

// PURL is the package URL of a Maven artifact, per the purl spec's maven
// type: pkg:maven/<group>/<artifact>@<version>[?classifier=<c>][&type=<ext>].
// Qualifiers are sorted by key; type is left out when it is the default, jar.
func PURL(group, artifact, version, classifier, ext string) string {
	s := "pkg:maven/" + escape(group) + "/" + escape(artifact) + "@" + escape(version)
	var q []string
	if classifier != "" {
		q = append(q, "classifier="+escape(classifier))
	}
	if ext != "" && ext != "jar" {
		q = append(q, "type="+escape(ext))
	}
	if len(q) > 0 {
		s += "?" + strings.Join(q, "&")
	}
	return s
}

// escape percent-encodes everything but the purl spec's unreserved
// characters (A-Z a-z 0-9 . - _ ~) and ':', which must not be encoded.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '-', c == '_', c == '~', c == ':':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// distributionURL is where repo serves the artifact (the m2 layout). A
// timestamped SNAPSHOT is given by its -SNAPSHOT name: the lock does not
// record the timestamp. An empty repository gives "".
func distributionURL(repo, group, artifact, version, classifier, ext string) string {
	if repo == "" {
		return ""
	}
	name := artifact + "-" + version
	if classifier != "" {
		name += "-" + classifier
	}
	return strings.TrimSuffix(redact.URL(repo), "/") + "/" + strings.ReplaceAll(group, ".", "/") + "/" + artifact + "/" + version + "/" + name + "." + ext
}

// namespaceURL is RFC 4122's URL namespace.
var namespaceURL = [16]byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

// uuidV5 is RFC 4122's name-based UUID (SHA-1).
func uuidV5(ns [16]byte, name string) string {
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}
