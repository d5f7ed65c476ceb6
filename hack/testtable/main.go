// Command testtable reads `go test -json` on stdin, prints each event's
// output as go test would have printed it, and ends with a table of the
// test binaries by wall time (slowest first) and their sum, so that every
// `make test` says where its time went (issue 43). With -o FILE the table
// is also written to FILE. It exits 1 when a package failed or the stream
// had no event, else 0 (make's pipefail keeps go test's own code too).
//
//	go test -json ./... | go run ./hack/testtable -o .test-times
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is the part of test2json's TestEvent that the table needs.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type row struct {
	pkg     string
	action  string
	elapsed time.Duration
}

func main() {
	out := flag.String("o", "", "also write the table to this file")
	flag.Parse()
	rows, err := copyAndCollect(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testtable: %v\n", err)
		os.Exit(1)
	}
	table := format(rows)
	fmt.Print(table)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(table), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "testtable: %v\n", err)
			os.Exit(1)
		}
	}
	if len(rows) == 0 || slices.ContainsFunc(rows, func(r row) bool { return r.action == "fail" }) {
		os.Exit(1)
	}
}

// copyAndCollect writes every event's Output to w (lines that are not JSON
// pass through as they are: build errors) and returns one row per package.
func copyAndCollect(r io.Reader, w io.Writer) ([]row, error) {
	var rows []row
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			bw.Write(line)
			bw.WriteByte('\n')
			continue
		}
		if e.Output != "" {
			bw.WriteString(e.Output)
			if strings.HasSuffix(e.Output, "\n") {
				bw.Flush()
			}
		}
		if e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
			rows = append(rows, row{e.Package, e.Action, time.Duration(e.Elapsed * float64(time.Second))})
		}
	}
	return rows, sc.Err()
}

// format is the table: the packages that took a second or more, slowest
// first, then the count and sum of the others and the total.
func format(rows []row) string {
	slices.SortFunc(rows, func(a, b row) int { return int(b.elapsed - a.elapsed) })
	var b strings.Builder
	var total, rest time.Duration
	restN := 0
	b.WriteString("\ntest time by package (wall, slowest first):\n")
	for _, r := range rows {
		total += r.elapsed
		if r.elapsed < time.Second {
			rest += r.elapsed
			restN++
			continue
		}
		fmt.Fprintf(&b, "  %8s  %-4s  %s\n", r.elapsed.Round(time.Second), r.action, r.pkg)
	}
	fmt.Fprintf(&b, "  %8s        %d packages under a second each\n", rest.Round(time.Second), restN)
	fmt.Fprintf(&b, "  %8s        sum over %d packages (two binaries run at a time)\n", total.Round(time.Second), len(rows))
	return b.String()
}
