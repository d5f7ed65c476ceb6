package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestStrictFlag: --strict alone is every kind but spark-patch (nil: the
// default set), --strict=KIND,… names kinds, and $PREBAKE_STRICT and
// strict: in prebake.yaml take the same values (a boolean or kinds).
func TestStrictFlag(t *testing.T) {
	dir := t.TempDir()
	n := 0
	cfg := func(body string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("c%d.yaml", n))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	type got struct {
		On    bool
		Kinds []string
		Err   bool
	}
	cases := []struct {
		name string
		args []string
		env  string
		file string
		want got
	}{
		{"off", nil, "", "", got{}},
		{"bare", []string{"--strict"}, "", "", got{On: true}},
		{"false", []string{"--strict=false"}, "", "", got{}},
		{"kinds", []string{"--strict=scala-binary,hadoop-version"}, "", "", got{On: true, Kinds: []string{"scala-binary", "hadoop-version"}}},
		{"unknown kind", []string{"--strict=spark-line"}, "", "", got{Err: true}},
		{"env kinds", nil, "spark-patch", "", got{On: true, Kinds: []string{"spark-patch"}}},
		{"env true", nil, "true", "", got{On: true}},
		{"file bool", nil, "", cfg("strict: true\n"), got{On: true}},
		{"file kinds", nil, "", cfg("strict: scala-binary\n"), got{On: true, Kinds: []string{"scala-binary"}}},
		{"file bad kind", nil, "", cfg("strict: nope\n"), got{Err: true}},
		{"flag over env", []string{"--strict=hadoop-version"}, "true", "", got{On: true, Kinds: []string{"hadoop-version"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s strictness
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			addStrictFlag(fs, &s)
			err := fs.Parse(c.args)
			if err == nil {
				getenv := func(k string) string {
					if k == "PREBAKE_STRICT" {
						return c.env
					}
					return ""
				}
				_, err = applySettings(fs, c.file, getenv)
			}
			g := got{On: s.on, Kinds: s.kinds, Err: err != nil}
			if diff := cmp.Diff(c.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

// TestStrictByKindCLI is review 4's MEDIUM 3 on the testdata base (Spark
// 3.5.0, Scala 2.12): spark-sql-kafka 3.5.1 is another patch of the base's
// line, reported but not fatal under a bare --strict; --strict=spark-patch
// makes it fatal, --strict=scala-binary does not.
func TestStrictByKindCLI(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	repo := sparkLineRepo(t)
	base := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0-amd64"
	bake := func(strict string) (int, string) {
		t.Helper()
		code, _, errs := runPrebake(context.Background(), "bake", "image", strict, "--base", base,
			"--target", "oci:"+filepath.Join(tmp, "img"), "--no-default-repositories", "--repositories", repo,
			"--cache", filepath.Join(tmp, "cache"), "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.1")
		return code, errs
	}
	for _, c := range []struct {
		strict string
		code   int
	}{
		{"--strict", exitcode.OK},
		{"--strict=scala-binary,hadoop-version", exitcode.OK},
		{"--strict=spark-patch", exitcode.DataErr},
		{"--strict=all,spark-patch", exitcode.DataErr},
		{"--strict=spark-line", exitcode.Usage},
	} {
		code, errs := bake(c.strict)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", c.strict, code, c.code, errs)
		}
		if c.code != exitcode.Usage && !strings.Contains(errs, "(spark-patch)") && !strings.Contains(errs, "WARNING (spark-patch)") {
			t.Errorf("%s: no spark-patch warning:\n%s", c.strict, errs)
		}
	}
}
