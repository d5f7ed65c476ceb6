package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver"
)

// kase is one line of testdata/central/cases.txt on one Spark line:
//
//	name | spark lines | --packages | --repositories (comma-separated) | --exclude-packages
//
// The spark lines are a comma-separated selector of testenv.SparkLines
// names ("3.5", "3.5-early") and majors ("3.x": every 3.x line, Scala 2.12;
// "4.x": every 4.x line, Scala 2.13 only); a case runs once per line it
// selects. In repositories, ${CENTRAL} is the machine's Central URL (or the
// recorded mirror when replaying) and ${TESTDATA} is testdata/central.
type kase struct {
	name, spark, coords, exclude string
	repos                        []string
	// multi: the selector names several lines, so the golden of each is
	// <name>@<line>.golden (one line: <name>.golden).
	multi bool
}

// id names the case on its line: name, or name@line when it runs on
// several.
func (c kase) id() string {
	if c.multi {
		return c.name + "@" + c.spark
	}
	return c.name
}

// sparkVersion is the pyspark version of the case's line.
func (c kase) sparkVersion() string { return sparkLines[c.spark].Version }

func loadCases(path string) ([]kase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []kase
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Split(line, "|")
		if len(p) != 5 {
			return nil, fmt.Errorf("%s:%d: want 5 |-separated fields, got %d", path, n, len(p))
		}
		for i := range p {
			p[i] = strings.TrimSpace(p[i])
		}
		c := kase{name: p[0], coords: p[2], exclude: p[4]}
		if p[3] != "" {
			c.repos = strings.Split(p[3], ",")
		}
		if c.name == "" || strings.ContainsAny(c.name, `/\ @`) || seen[c.name] {
			return nil, fmt.Errorf("%s:%d: bad or duplicate case name %q", path, n, c.name)
		}
		lines, err := selectLines(p[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		seen[c.name] = true
		for _, l := range lines {
			c.spark, c.multi = l, len(lines) > 1
			out = append(out, c)
		}
	}
	return out, sc.Err()
}

// selectLines expands a case's selector into line names, oldest first.
func selectLines(sel string) ([]string, error) {
	want := map[string]bool{}
	for _, s := range strings.Split(sel, ",") {
		s = strings.TrimSpace(s)
		found := false
		for _, l := range testenv.SparkLines {
			if l.Name == s || (strings.HasSuffix(s, ".x") && strings.HasPrefix(l.Name, strings.TrimSuffix(s, "x"))) {
				want[l.Name], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("spark %q: want a comma-separated list of %v or 3.x, 4.x", s, sortedLines())
		}
	}
	var out []string
	for _, l := range testenv.SparkLines {
		if want[l.Name] {
			out = append(out, l.Name)
		}
	}
	return out, nil
}

// sparkLines maps a line's name ("3.5-early") to testenv.SparkLines' entry.
var sparkLines = func() map[string]testenv.SparkLine {
	m := map[string]testenv.SparkLine{}
	for _, l := range testenv.SparkLines {
		m[l.Name] = l
	}
	return m
}()

// sortedLines are the line names, oldest first.
func sortedLines() []string {
	var l []string
	for _, s := range testenv.SparkLines {
		l = append(l, s.Name)
	}
	return l
}

// expand substitutes ${CENTRAL} and ${TESTDATA} in the case's repositories.
func (c kase) expand(central, testdata string) []string {
	var out []string
	for _, r := range c.repos {
		r = strings.ReplaceAll(r, "${CENTRAL}", central)
		r = strings.ReplaceAll(r, "${TESTDATA}", testdata)
		out = append(out, r)
	}
	return out
}

func (c kase) request(central, testdata, cache string) resolver.Request {
	req := resolver.Request{Packages: []string{c.coords}, Repositories: c.expand(central, testdata), CacheDir: cache, SparkVersion: c.sparkVersion()}
	if c.exclude != "" {
		req.Excludes = []string{c.exclude}
	}
	return req
}

// outcome is what one side (Spark or prebake) retrieved: the jar file names
// with their sha256 (sha256 "" when only names are known), or a failure.
type outcome struct {
	jars   map[string]string // Spark-style file name → sha256
	failed bool
	detail string // why it failed (not part of the comparison)
}

func (o outcome) names() []string {
	var n []string
	for k := range o.jars {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// golden renders the outcome as testdata/central/cases/<name>.golden.
func (o outcome) golden(c kase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# spark-submit %s --packages %s", c.sparkVersion(), c.coords)
	if len(c.repos) > 0 {
		fmt.Fprintf(&b, " --repositories %s", strings.Join(c.repos, ","))
	}
	if c.exclude != "" {
		fmt.Fprintf(&b, " --exclude-packages %s", c.exclude)
	}
	b.WriteString("\n")
	if o.failed {
		b.WriteString("error\n")
		return b.String()
	}
	for _, n := range o.names() {
		fmt.Fprintf(&b, "jar %s %s\n", n, o.jars[n])
	}
	return b.String()
}

func readGolden(path string) (outcome, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return outcome{}, err
	}
	o := outcome{jars: map[string]string{}}
	for i, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "error" && len(f) == 1:
			o.failed = true
		case f[0] == "jar" && len(f) == 3:
			o.jars[f[1]] = f[2]
		default:
			return outcome{}, fmt.Errorf("%s:%d: bad line %q", path, i+1, l)
		}
	}
	return o, nil
}

// compare describes how got differs from want ("" when equal); withSums
// compares the sha256 too.
func compare(want, got outcome, withSums bool) string {
	if want.failed || got.failed {
		if want.failed == got.failed {
			return ""
		}
		if want.failed {
			return "Spark failed but prebake resolved " + strings.Join(got.names(), " ")
		}
		return "prebake failed where Spark resolved: " + got.detail
	}
	var d []string
	for _, n := range want.names() {
		g, ok := got.jars[n]
		switch {
		case !ok:
			d = append(d, "- "+n)
		case withSums && g != want.jars[n]:
			d = append(d, fmt.Sprintf("~ %s: sha256 %s, want %s", n, g, want.jars[n]))
		}
	}
	for _, n := range got.names() {
		if _, ok := want.jars[n]; !ok {
			d = append(d, "+ "+n)
		}
	}
	return strings.Join(d, "\n")
}

// goldenPath is testdata/central/cases/<id>.golden under root.
func goldenPath(root string, c kase) string {
	return filepath.Join(root, "testdata", "central", "cases", c.id()+".golden")
}
