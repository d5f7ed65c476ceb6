package testenv

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMakefileLinePatches: make native-lines installs every patch of
// SparkLinePatches, and the ones .ci/run checks live are installed by
// default (CISparkVersions).
func TestMakefileLinePatches(t *testing.T) {
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^SPARK_LINE_PATCHES := ([0-9. ]+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("Makefile: no SPARK_LINE_PATCHES")
	}
	if diff := cmp.Diff(SparkLinePatches, strings.Fields(string(m[1]))); diff != "" {
		t.Errorf("Makefile's SPARK_LINE_PATCHES (-SparkLinePatches +Makefile):\n%s", diff)
	}
	var ci []string
	for _, v := range SparkLinePatches {
		if slices.Contains(CISparkVersions(), v) {
			ci = append(ci, v)
		}
	}
	if diff := cmp.Diff([]string{"3.5.9", "4.0.5", "4.3.0"}, ci); diff != "" {
		t.Errorf("patches .ci/run checks live (the README says 3.5.9, 4.0.5 and 4.3.0):\n%s", diff)
	}
}

// TestSparkPatchHome: a patch CI does not install is skipped when absent,
// even under CI; one it installs is required.
func TestSparkPatchHome(t *testing.T) {
	t.Setenv("PREBAKE_CI_CACHE", t.TempDir())
	t.Setenv("CI", "true")
	t.Setenv("PREBAKE_IT", "1")
	t.Setenv("PREBAKE_JVM", "1")
	t.Setenv("PREBAKE_SPARK_LINES", "")
	tests := []struct {
		version string
		all     bool
		want    string // "skip" or "fatal"
	}{
		{"4.1.0", false, "skip"},
		{"4.3.0", false, "fatal"},
		{"4.1.0", true, "fatal"},
	}
	for _, tc := range tests {
		if tc.all {
			t.Setenv("PREBAKE_SPARK_LINES", "all")
		} else {
			t.Setenv("PREBAKE_SPARK_LINES", "")
		}
		r := &recorder{}
		func() {
			defer func() { _ = recover() }()
			SparkPatchHome(r, tc.version)
		}()
		got := "none"
		switch {
		case r.fatal:
			got = "fatal"
		case r.skipped:
			got = "skip"
		}
		if got != tc.want {
			t.Errorf("SparkPatchHome(%s) all=%v: %s, want %s", tc.version, tc.all, got, tc.want)
		}
	}
}

// recorder is a testing.TB whose Skip and Fatal are recorded and stop the
// call (by panicking; the caller recovers).
type recorder struct {
	testing.TB
	skipped, fatal bool
}

type stop struct{}

func (r *recorder) Helper()               {}
func (r *recorder) Skip(...any)           { r.skipped = true; panic(stop{}) }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true; panic(stop{}) }
func (r *recorder) Fatal(...any)          { r.fatal = true; panic(stop{}) }
func (r *recorder) Fatalf(string, ...any) { r.fatal = true; panic(stop{}) }

// TestTiers: under CI=true a skip is a failure in a tier that was asked
// for (PREBAKE_IT=1 for the servers, PREBAKE_JVM=1 too for the JVMs); a JVM
// test skips when only the server tier was asked for.
func TestTiers(t *testing.T) {
	t.Setenv("PREBAKE_CI_CACHE", t.TempDir()) // no pyspark, no Airflow
	t.Setenv("CI", "true")
	tests := []struct {
		it, jvm string
		want    map[string]string // gate -> "skip", "fatal" or "none"
	}{
		{"", "", map[string]string{"RequireIT": "fatal", "NeedJVM": "fatal", "SparkHome": "fatal", "Airflow": "fatal"}},
		{"1", "", map[string]string{"RequireIT": "none", "NeedJVM": "skip", "SparkHome": "skip", "Airflow": "skip"}},
		{"1", "0", map[string]string{"RequireIT": "none", "NeedJVM": "skip", "SparkHome": "skip", "Airflow": "skip"}},
		{"1", "1", map[string]string{"RequireIT": "none", "NeedJVM": "none", "SparkHome": "fatal", "Airflow": "fatal"}},
	}
	gates := map[string]func(testing.TB){
		"RequireIT": RequireIT,
		"NeedJVM":   NeedJVM,
		"SparkHome": func(t testing.TB) { SparkHome(t, "3.5.9") },
		"Airflow":   func(t testing.TB) { Airflow(t) },
	}
	for _, tc := range tests {
		t.Setenv("PREBAKE_IT", tc.it)
		t.Setenv("PREBAKE_JVM", tc.jvm)
		got := map[string]string{}
		for name, gate := range gates {
			r := &recorder{}
			func() {
				defer func() { _ = recover() }()
				gate(r)
			}()
			got[name] = "none"
			switch {
			case r.fatal:
				got[name] = "fatal"
			case r.skipped:
				got[name] = "skip"
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("PREBAKE_IT=%q PREBAKE_JVM=%q (-want +got):\n%s", tc.it, tc.jvm, diff)
		}
	}
}
