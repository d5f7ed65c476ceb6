package maven

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// gopomShape holds the declarations of github.com/vifraa/gopom v1.0.0's
// Project that decide whether a POM decodes at all: the root element is
// pinned to <project> (XMLName `xml:"project"`), and elements the resolver
// never reads are typed *bool (Repository.UniqueVersion, Notifier.SendOn*,
// Activation.ActiveByDefault), so any other value fails the whole decode.
// gopom's ParseFromReader is xml.Unmarshal into Project (no CharsetReader,
// strict entities). The checks here were run against gopom v1.0.0 itself
// (docs/design.md, "Dependencies"); the module is not linked for a test.
type gopomShape struct {
	XMLName                *xml.Name `xml:"project,omitempty"`
	DistributionManagement *struct {
		Repository *struct {
			UniqueVersion *bool `xml:"uniqueVersion,omitempty"`
		} `xml:"repository,omitempty"`
		SnapshotRepository *struct {
			UniqueVersion *bool `xml:"uniqueVersion,omitempty"`
		} `xml:"snapshotRepository,omitempty"`
	} `xml:"distributionManagement,omitempty"`
	Dependencies *[]struct {
		GroupID *string `xml:"groupId,omitempty"`
	} `xml:"dependencies>dependency,omitempty"`
}

// The cases where gopom's model (or its parser) loses a POM that Ivy 2.5
// reads and prebake's maven package reads as Ivy does: the reason prebake
// owns its POM structs (measured over the 1,627 POMs of the shared corpus
// and testdata: gopom's parsing path fails on 64, prebake's on none).
func TestWhereGopomFallsShort(t *testing.T) {
	dep := `<dependencies><dependency><groupId>org.x</groupId><artifactId>dep</artifactId><version>${dep.version}</version></dependency></dependencies>`
	tests := []struct {
		name string
		pom  string
		// structLevel: gopom's Project fails even decoded with prebake's
		// decoder (charsets, HTML entities); else only gopom's parser does.
		structLevel bool
		gopomErr    string
	}{
		{
			// Ivy's own parser test (repo-ivy-tests parser-poms/test-model.pom):
			// a <model> root, which Ivy's PomReader accepts.
			name:        "model root",
			pom:         `<?xml version="1.0"?><model><groupId>org.apache</groupId><artifactId>test</artifactId><version>1.0</version><properties><dep.version>2.1</dep.version></properties>` + dep + `</model>`,
			structLevel: true,
			gopomErr:    "expected element type <project> but have <model>",
		},
		{
			// An element no resolver reads, with a value that is no boolean.
			name:        "non-boolean uniqueVersion",
			pom:         `<?xml version="1.0"?><project><groupId>org.apache</groupId><artifactId>test</artifactId><version>1.0</version><properties><dep.version>2.1</dep.version></properties>` + dep + `<distributionManagement><snapshotRepository><id>s</id><uniqueVersion>${unique}</uniqueVersion></snapshotRepository></distributionManagement></project>`,
			structLevel: true,
			gopomErr:    "strconv.ParseBool",
		},
		{
			// 62 POMs of the corpus declare ISO-8859-1, commons-parent 10 and 11
			// (parents of commons-* releases on Central) among them.
			name:     "ISO-8859-1",
			pom:      "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><project><name>Caf\xe9</name><groupId>org.apache</groupId><artifactId>test</artifactId><version>1.0</version><properties><dep.version>2.1</dep.version></properties>" + dep + `</project>`,
			gopomErr: `encoding "ISO-8859-1" declared but Decoder.CharsetReader is nil`,
		},
		{
			// Ivy's parser-poms/test-entity.pom: an HTML entity Ivy expands.
			name:     "HTML entity",
			pom:      `<?xml version="1.0"?><project><name>Test User &oslash;</name><groupId>org.apache</groupId><artifactId>test</artifactId><version>1.0</version><properties><dep.version>2.1</dep.version></properties>` + dep + `</project>`,
			gopomErr: "invalid character entity &oslash;",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// gopom's parser: xml.Unmarshal into its Project.
			var g gopomShape
			if err := xml.Unmarshal([]byte(tt.pom), &g); err == nil || !strings.Contains(err.Error(), tt.gopomErr) {
				t.Errorf("gopom's ParseFromReader: %v, want an error with %q", err, tt.gopomErr)
			}
			// gopom's Project with prebake's decoder configuration.
			err := newDecoder([]byte(tt.pom)).Decode(&g)
			if got := err != nil; got != tt.structLevel {
				t.Errorf("gopom's struct with prebake's decoder: %v, want failing %v", err, tt.structLevel)
			}
			// prebake's maven package: the module and its dependency, interpolated.
			m, err := load(t, memFetcher{"org.apache:test:1.0": tt.pom}, "org.apache:test:1.0")
			if err != nil {
				t.Fatalf("maven: %v", err)
			}
			var got []string
			for _, d := range m.Dependencies {
				got = append(got, d.Group+":"+d.Artifact+":"+d.Version)
			}
			if diff := cmp.Diff([]string{"org.x:dep:2.1"}, got); diff != "" || m.Coord != (Coord{"org.apache", "test", "1.0"}) {
				t.Errorf("maven: %v, dependencies (-want +got):\n%s", m.Coord, diff)
			}
		})
	}
}
