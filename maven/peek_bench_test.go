package maven

import (
	"bytes"
	"encoding/xml"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkPeek times Peek against the scanner it replaced (the
// resolver's pomHints, kept below as the baseline) side by side in one run,
// alternating on every iteration, over the repository's fixture POMs that
// both read and over the largest one (spark-parent, 117 KB). It reports ns
// per POM for each and their ratio (peek/before), and parse's for scale.
// (The old scanner gave up on the POMs it could not decode, entities or
// ISO-8859-1 ones such as commons-parent 48 and 52; Peek reads them.)
//
//	go test -run XXX -bench Peek -benchtime 20x ./maven/
func BenchmarkPeek(b *testing.B) {
	var all [][]byte
	err := filepath.WalkDir("../testdata/parity/repos", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".pom") {
			return err
		}
		data, err := os.ReadFile(path)
		if pomHintsBefore(data) {
			all = append(all, data)
		}
		return err
	})
	if err != nil || len(all) < 100 {
		b.Fatalf("fixture POMs: %d, %v", len(all), err)
	}
	large, err := os.ReadFile("../testdata/parity/repos/real/org/apache/spark/spark-parent_2.12/3.0.0/spark-parent_2.12-3.0.0.pom")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		poms [][]byte
	}{{"fixtures", all}, {"spark-parent", [][]byte{large}}} {
		b.Run(bc.name, func(b *testing.B) {
			readers := []func([]byte){
				func(p []byte) { pomHintsBefore(p) },
				func(p []byte) { _, _ = Peek(p) },
				func(p []byte) { _, _ = parse(p) },
			}
			var total [3]time.Duration
			ratios := make([]float64, 0, b.N)
			for i := 0; i < b.N; i++ {
				var d [3]time.Duration
				// Alternate the order so that neither side always runs
				// on a warm cache.
				for k := range readers {
					r := (k + i) % len(readers)
					t0 := time.Now()
					for _, p := range bc.poms {
						readers[r](p)
					}
					d[r] = time.Since(t0)
					total[r] += d[r]
				}
				ratios = append(ratios, float64(d[1])/float64(d[0]))
			}
			n := float64(b.N * len(bc.poms))
			b.ReportMetric(float64(total[0].Nanoseconds())/n, "before-ns/pom")
			b.ReportMetric(float64(total[1].Nanoseconds())/n, "peek-ns/pom")
			b.ReportMetric(float64(total[2].Nanoseconds())/n, "parse-ns/pom")
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "peek/before(median)")
			// Allocations do not depend on the machine's load.
			for k, name := range []string{"before-B/pom", "peek-B/pom", "parse-B/pom"} {
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				for _, p := range bc.poms {
					readers[k](p)
				}
				runtime.ReadMemStats(&m1)
				b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(len(bc.poms)), name)
			}
		})
	}
}

// pomHintsBefore is resolver.pomHints as it was before maven.Peek replaced
// it (commit 49f9b31), reduced to its work: the benchmark's baseline only.
func pomHintsBefore(data []byte) (ok bool) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []string
	var text []byte
	var parent, dep [3]string
	var scope, optional string
	var packaging string
	var deps [][3]string
	managed, props := map[string]string{}, map[string]string{}
	isDep := func(n int) bool { return len(stack) == n && stack[1] == "dependencies" && stack[2] == "dependency" }
	isMgmt := func(n int) bool {
		return len(stack) == n && stack[1] == "dependencyManagement" && stack[2] == "dependencies" && stack[3] == "dependency"
	}
	set := func(c *[3]string, field, v string) {
		switch field {
		case "groupId":
			c[0] = v
		case "artifactId":
			c[1] = v
		case "version":
			c[2] = v
		}
	}
	for {
		tok, err := d.RawToken()
		if err == io.EOF && len(stack) == 0 {
			break
		}
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
			text = text[:0]
			if isDep(3) || isMgmt(4) {
				dep, scope, optional = [3]string{}, "", ""
			}
		case xml.CharData:
			text = append(text, t...)
		case xml.EndElement:
			if len(stack) == 0 {
				return false
			}
			v := strings.TrimSpace(string(text))
			switch {
			case len(stack) == 2 && stack[1] == "packaging":
				packaging = v
			case len(stack) == 3 && stack[1] == "parent":
				set(&parent, stack[2], v)
			case len(stack) == 3 && stack[1] == "properties":
				if _, ok := props[stack[2]]; !ok {
					props[stack[2]] = v
				}
			case isDep(4) || isMgmt(5):
				field := stack[len(stack)-1]
				set(&dep, field, v)
				switch field {
				case "scope":
					scope = v
				case "optional":
					optional = v
				}
			case isDep(3):
				if dep[0] != "" && dep[1] != "" && (scope == "" || scope == "compile" || scope == "runtime") && optional != "true" {
					deps = append(deps, dep)
				}
			case isMgmt(4):
				key := dep[0] + ":" + dep[1]
				if _, ok := managed[key]; !ok && scope != "import" && dep[2] != "" {
					managed[key] = dep[2]
				}
			}
			stack = stack[:len(stack)-1]
			text = text[:0]
		}
	}
	_, _, _ = packaging, parent, deps
	return true
}
