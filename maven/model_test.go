package maven

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type memFetcher map[string]string

func (m memFetcher) FetchPOM(ctx context.Context, g, a, v string) ([]byte, string, error) {
	k := g + ":" + a + ":" + v
	s, ok := m[k]
	if !ok {
		return nil, k, fmt.Errorf("%s: %w", k, errNotFound)
	}
	return []byte(s), k, nil
}

var errNotFound = errors.New("not found")

func pom(body string) string {
	return `<?xml version="1.0"?><project><modelVersion>4.0.0</modelVersion>` + body + `</project>`
}

func load(t *testing.T, f memFetcher, c string) (*Model, error) {
	t.Helper()
	var g, a, v string
	fmt.Sscanf(c, "%s", &g)
	parts := splitColon(c)
	g, a, v = parts[0], parts[1], parts[2]
	return NewLoader(f).Load(context.Background(), g, a, v)
}

func splitColon(s string) []string {
	var out []string
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			out = append(out, s[last:i])
			last = i + 1
		}
	}
	return append(out, s[last:])
}

func deps(m *Model) []string {
	var out []string
	for _, d := range m.Dependencies {
		s := d.Group + ":" + d.Artifact + ":" + d.Version + "/" + d.Scope
		if d.Optional {
			s += "/optional"
		}
		for _, e := range d.Exclusions {
			s += "/-" + e.Group + ":" + e.Artifact
		}
		out = append(out, s)
	}
	return out
}

func TestInterpolationAndParents(t *testing.T) {
	f := memFetcher{
		"org.x:grand:1": pom(`<groupId>org.x</groupId><artifactId>grand</artifactId><version>1</version><packaging>pom</packaging>
			<properties><lib.version>9.9</lib.version><shared>grand</shared></properties>
			<dependencyManagement><dependencies>
			  <dependency><groupId>org.lib</groupId><artifactId>managed</artifactId><version>${lib.version}</version><scope>runtime</scope>
			    <exclusions><exclusion><groupId>org.bad</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
			  <dependency><groupId>org.lib</groupId><artifactId>selfver</artifactId><version>${project.version}</version></dependency>
			</dependencies></dependencyManagement>`),
		"org.x:parent:2": pom(`<parent><groupId>org.x</groupId><artifactId>grand</artifactId><version>1</version></parent>
			<artifactId>parent</artifactId><version>2</version><packaging>pom</packaging>
			<properties><lib.version>1.5</lib.version></properties>
			<dependencies><dependency><groupId>org.lib</groupId><artifactId>inherited</artifactId><version>${pom.version}</version></dependency></dependencies>`),
		"org.x:child:3": pom(`<parent><groupId>org.x</groupId><artifactId>parent</artifactId><version>2</version></parent>
			<artifactId>child</artifactId><version>3</version>
			<properties><own>${project.artifactId}-${parent.version}</own></properties>
			<dependencies>
			  <dependency><groupId>org.lib</groupId><artifactId>managed</artifactId></dependency>
			  <dependency><groupId>org.lib</groupId><artifactId>selfver</artifactId></dependency>
			  <dependency><groupId>org.lib</groupId><artifactId>${own}</artifactId><version>${project.parent.version}</version><scope>test</scope></dependency>
			  <dependency><groupId>org.lib</groupId><artifactId>opt</artifactId><version>1</version><optional>true</optional></dependency>
			  <dependency><groupId>org.lib</groupId><artifactId>odd</artifactId><version>1</version><scope>weird</scope></dependency>
			  <dependency><groupId>org.x</groupId><artifactId>child</artifactId><version>0</version></dependency>
			</dependencies>`),
	}
	m, err := load(t, f, "org.x:child:3")
	if err != nil {
		t.Fatal(err)
	}
	if m.Coord != (Coord{"org.x", "child", "3"}) {
		t.Errorf("coord = %v (groupId inherited from the parent)", m.Coord)
	}
	want := []string{
		"org.lib:managed:1.5/runtime/-org.bad:*", // managed version via the nearest property, scope and exclusions from dependencyManagement
		"org.lib:selfver:3/compile",              // ${project.version} in the grandparent's management is the child's (IVY-1301)
		"org.lib:child-2:2/test",
		"org.lib:opt:1/compile/optional",
		"org.lib:odd:1/compile",       // unknown scope → compile
		"org.lib:inherited:3/compile", // parent's dependencies come last, re-read with the child's properties
	}
	if diff := cmp.Diff(want, deps(m)); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
}

func TestBOMImportAndRelocation(t *testing.T) {
	f := memFetcher{
		"org.b:bom:1": pom(`<groupId>org.b</groupId><artifactId>bom</artifactId><version>1</version><packaging>pom</packaging>
			<dependencyManagement><dependencies><dependency><groupId>org.lib</groupId><artifactId>a</artifactId><version>7</version></dependency></dependencies></dependencyManagement>`),
		"org.x:user:1": pom(`<groupId>org.x</groupId><artifactId>user</artifactId><version>1</version>
			<dependencyManagement><dependencies><dependency><groupId>org.b</groupId><artifactId>bom</artifactId><version>1</version><type>pom</type><scope>import</scope></dependency></dependencies></dependencyManagement>
			<dependencies><dependency><groupId>org.lib</groupId><artifactId>a</artifactId></dependency></dependencies>`),
		"org.x:missingbom:1": pom(`<groupId>org.x</groupId><artifactId>missingbom</artifactId><version>1</version>
			<dependencyManagement><dependencies><dependency><groupId>org.b</groupId><artifactId>nope</artifactId><version>1</version><type>pom</type><scope>import</scope></dependency></dependencies></dependencyManagement>`),
		"org.old:lib:1": pom(`<groupId>org.old</groupId><artifactId>lib</artifactId><version>1</version>
			<distributionManagement><relocation><groupId>org.new</groupId></relocation></distributionManagement>`),
		"org.x:cyc:1": pom(`<parent><groupId>org.x</groupId><artifactId>cyc</artifactId><version>1</version></parent><artifactId>cyc</artifactId>`),
	}
	m, err := load(t, f, "org.x:user:1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"org.lib:a:7/compile"}, deps(m)); diff != "" {
		t.Errorf("BOM-managed dependency (-want +got):\n%s", diff)
	}
	if _, err := load(t, f, "org.x:missingbom:1"); !errors.Is(err, errNotFound) {
		t.Errorf("missing BOM: err = %v, want not found", err)
	}
	r, err := load(t, f, "org.old:lib:1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Relocation == nil || *r.Relocation != (Coord{"org.new", "lib", "1"}) {
		t.Errorf("relocation = %v, want org.new:lib:1", r.Relocation)
	}
	if _, err := load(t, f, "org.x:cyc:1"); !errors.Is(err, ErrCycle) {
		t.Errorf("self parent: err = %v, want ErrCycle", err)
	}
}

func TestInterpolateCycle(t *testing.T) {
	_, err := Interpolate("${a}", map[string]string{"a": "${b}", "b": "${a}"})
	if !errors.Is(err, ErrCyclicProperty) {
		t.Errorf("err = %v, want ErrCyclicProperty", err)
	}
	got, _ := Interpolate("${a}-${unknown}", map[string]string{"a": "${b}", "b": "x"})
	if got != "x-${unknown}" {
		t.Errorf("got %q", got)
	}
}

func TestParseMalformed(t *testing.T) {
	for _, s := range []string{"", "<project>", "<notpom/>", "<project></project><project/>"} {
		if _, err := parse([]byte(s)); !errors.Is(err, ErrMalformed) {
			t.Errorf("parse(%q): err = %v, want ErrMalformed", s, err)
		}
	}
	latin1 := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><project><groupId>caf\xe9</groupId><artifactId>a</artifactId></project>")
	p, err := parse(latin1)
	if err != nil || p.GroupID != "café" {
		t.Errorf("ISO-8859-1 POM: %v", err)
	}
}

func FuzzParsePOM(f *testing.F) {
	f.Add([]byte(pom(`<groupId>g</groupId><artifactId>a</artifactId><version>1</version>`)))
	f.Add([]byte(`<model><artifactId>x</artifactId></model>`))
	f.Add([]byte(`<project><properties><a>${a}</a></properties></project>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parse(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		l := NewLoader(memFetcher{"g:a:1": string(data)})
		_ = p
		start := time.Now()
		m, err := l.Load(context.Background(), "g", "a", "1")
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Load took %v", d)
		}
		if err != nil {
			return
		}
		// Path containment: every coordinate the model hands on is one
		// CheckPart accepts.
		for _, d := range m.Dependencies {
			if err := d.check(); err != nil {
				t.Fatalf("dependency %+v passed the loader: %v", d, err)
			}
		}
		if m.Relocation != nil {
			if err := CheckCoord(*m.Relocation); err != nil {
				t.Fatalf("relocation %+v passed the loader: %v", *m.Relocation, err)
			}
		}
	})
}

// slowFetcher answers after a delay, so that concurrent loads overlap.
type slowFetcher struct{ memFetcher }

func (f slowFetcher) FetchPOM(ctx context.Context, g, a, v string) ([]byte, string, error) {
	time.Sleep(20 * time.Millisecond)
	return f.memFetcher.FetchPOM(ctx, g, a, v)
}

// TestConcurrentParentCycle: modules whose parents form a cycle, loaded at
// once from several goroutines (as the resolver's prefetch does), fail with
// ErrCycle instead of each waiting for the other forever.
func TestConcurrentParentCycle(t *testing.T) {
	parentOf := func(a, p string) string {
		return pom(`<parent><groupId>g</groupId><artifactId>` + p + `</artifactId><version>1</version></parent><artifactId>` + a + `</artifactId>`)
	}
	for _, ring := range [][]string{{"a", "b"}, {"a", "b", "c"}, {"a", "b", "c", "d", "e"}} {
		t.Run(fmt.Sprint(len(ring)), func(t *testing.T) {
			f := slowFetcher{memFetcher{}}
			for i, a := range ring {
				f.memFetcher["g:"+a+":1"] = parentOf(a, ring[(i+1)%len(ring)])
			}
			l := NewLoader(f)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			errs := make([]error, len(ring))
			var wg sync.WaitGroup
			for i, a := range ring {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = l.Load(ctx, "g", a, "1")
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if !errors.Is(err, ErrCycle) {
					t.Errorf("Load(g:%s:1): err = %v, want ErrCycle", ring[i], err)
				}
			}
		})
	}
}

// TestManagedByKind: Ivy 2.6.0's dependencyManagement (IVY-1654) matches
// type and classifier as well; Ivy 2.5's matches groupId:artifactId, the
// last entry winning. Mediation (ManagedVersion) is by module in both.
func TestManagedByKind(t *testing.T) {
	mg := func(body string) string {
		return `<dependencyManagement><dependencies>` + body + `</dependencies></dependencyManagement>`
	}
	const (
		libData  = `<dependency><groupId>l</groupId><artifactId>lib</artifactId><version>3</version><classifier>data</classifier></dependency>`
		libPlain = `<dependency><groupId>l</groupId><artifactId>lib</artifactId><version>2</version></dependency>`
	)
	f := memFetcher{
		"p:par:1": pom(`<groupId>p</groupId><artifactId>par</artifactId><version>1</version><packaging>pom</packaging>` + mg(libData+libPlain)),
		"p:bom:1": pom(`<groupId>p</groupId><artifactId>bom</artifactId><version>1</version><packaging>pom</packaging>` + mg(libData+libPlain)),
		"p:classifier:1": pom(`<groupId>p</groupId><artifactId>classifier</artifactId><version>1</version>` + mg(libData+libPlain) +
			`<dependencies><dependency><groupId>l</groupId><artifactId>lib</artifactId><classifier>data</classifier></dependency></dependencies>`),
		"p:type:1": pom(`<groupId>p</groupId><artifactId>type</artifactId><version>1</version>` +
			mg(`<dependency><groupId>l</groupId><artifactId>lib</artifactId><version>3</version><type>bundle</type></dependency>`+libPlain) +
			`<dependencies><dependency><groupId>l</groupId><artifactId>lib</artifactId><type>bundle</type></dependency></dependencies>`),
		"p:jartype:1": pom(`<groupId>p</groupId><artifactId>jartype</artifactId><version>1</version>` +
			mg(`<dependency><groupId>l</groupId><artifactId>lib</artifactId><version>3</version><type>jar</type></dependency>`) +
			`<dependencies><dependency><groupId>l</groupId><artifactId>lib</artifactId></dependency></dependencies>`),
		"p:scope:1": pom(`<groupId>p</groupId><artifactId>scope</artifactId><version>1</version>` +
			mg(`<dependency><groupId>l</groupId><artifactId>lib</artifactId><version>2</version><scope>provided</scope><exclusions><exclusion><groupId>z</groupId><artifactId>z</artifactId></exclusion></exclusions></dependency>`) +
			`<dependencies><dependency><groupId>l</groupId><artifactId>lib</artifactId><version>2</version><classifier>data</classifier></dependency></dependencies>`),
		"p:child:1": pom(`<parent><groupId>p</groupId><artifactId>par</artifactId><version>1</version></parent><artifactId>child</artifactId>
			<dependencies><dependency><groupId>l</groupId><artifactId>lib</artifactId><classifier>data</classifier></dependency></dependencies>`),
		"p:imports:1": pom(`<groupId>p</groupId><artifactId>imports</artifactId><version>1</version>` +
			mg(`<dependency><groupId>p</groupId><artifactId>bom</artifactId><version>1</version><type>pom</type><scope>import</scope></dependency>`) +
			`<dependencies><dependency><groupId>l</groupId><artifactId>lib</artifactId><classifier>data</classifier></dependency></dependencies>`),
	}
	for _, tc := range []struct {
		module    string
		ivy25     []string
		ivy26     []string
		mediation string // ManagedVersion of l:lib, both
	}{
		{"p:classifier:1", []string{"l:lib:2/compile"}, []string{"l:lib:3/compile"}, "2"},
		{"p:type:1", []string{"l:lib:2/compile"}, []string{"l:lib:3/compile"}, "2"},
		{"p:jartype:1", []string{"l:lib:3/compile"}, []string{"l:lib:3/compile"}, "3"},
		{"p:scope:1", []string{"l:lib:2/provided/-z:z"}, []string{"l:lib:2/compile"}, "2"},
		{"p:child:1", []string{"l:lib:2/compile"}, []string{"l:lib:3/compile"}, "2"},
		{"p:imports:1", []string{"l:lib:2/compile"}, []string{"l:lib:3/compile"}, "2"},
	} {
		t.Run(tc.module, func(t *testing.T) {
			p := splitColon(tc.module)
			for _, byKind := range []bool{false, true} {
				l := NewLoader(f)
				l.ManagedByKind = byKind
				m, err := l.Load(context.Background(), p[0], p[1], p[2])
				if err != nil {
					t.Fatal(err)
				}
				want := map[bool][]string{false: tc.ivy25, true: tc.ivy26}[byKind]
				if d := cmp.Diff(want, deps(m)); d != "" {
					t.Errorf("ManagedByKind %v: dependencies (-want +got):\n%s", byKind, d)
				}
				if v, _ := m.ManagedVersion("l", "lib"); v != tc.mediation {
					t.Errorf("ManagedByKind %v: ManagedVersion = %q, want %q", byKind, v, tc.mediation)
				}
			}
		})
	}
}
