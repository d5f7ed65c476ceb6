package maven

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheckPart(t *testing.T) {
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"org.apache.spark", true},
		{"spark-core_2.12", true},
		{"3.5.0", true},
		{"[1.0,2.0)", true},
		{"1.+", true},
		{"latest.release", true},
		{"${unresolved}", true},
		{"café", true},
		{"", true}, // absent (classifier, type): callers require parts
		{".", false},
		{"..", false},
		{"...", true},
		{"a/b", false},
		{`a\b`, false},
		{"a:b", false},
		{"a%2e", false},
		{"a?b", false},
		{"a#b", false},
		{"a\x00b", false},
		{"a\tb", false},
		{"a\nb", false},
		{"a\x7fb", false},
		{"a\u0085b", false}, // C1 control
		{"a\xffb", false},   // invalid UTF-8
	} {
		err := CheckPart(FieldGroup, tc.value)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPart(%q) = %v, want ok %v", tc.value, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidCoordinate) {
			t.Errorf("CheckPart(%q): %v does not match ErrInvalidCoordinate", tc.value, err)
		}
	}
	long := strings.Repeat("a/", 10000)
	if err := CheckPart(FieldVersion, long); err == nil || len(err.Error()) > 400 {
		t.Errorf("a long value: the error is not short: %d bytes", len(err.Error()))
	}
}

// bombPOM is the review's 855-byte POM: p0 is ten x's, each p(i) ten
// copies of ${p(i-1)} up to p9 (10^10 bytes expanded), used as a version.
func bombPOM(p0, use string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<properties><p0>%s</p0>", p0)
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "<p%d>%s</p%d>", i, strings.Repeat(fmt.Sprintf("${p%d}", i-1), 10), i)
	}
	b.WriteString("</properties>")
	return pom(`<groupId>ev</groupId><artifactId>propbomb</artifactId><version>1</version>` + b.String() + use)
}

// TestExpansionBomb: a property expansion bomb fails with ErrExpansion, in
// well under a second and a few MB, with a short error; the same
// definitions that expand to nothing, or are never used, are harmless.
func TestExpansionBomb(t *testing.T) {
	dep := `<dependencies><dependency><groupId>ev</groupId><artifactId>x</artifactId><version>${p9}</version></dependency></dependencies>`
	for _, tc := range []struct {
		name, p0, use string
		wantErr       bool
	}{
		{"10^10 bytes", "xxxxxxxxxx", dep, true},
		{"empty: 10^9 substitutions of nothing", "", dep, false},
		{"unused", "xxxxxxxxxx", `<description>${p2}</description>`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := bombPOM(tc.p0, tc.use)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			m, err := NewLoader(memFetcher{"ev:propbomb:1": data}).Load(context.Background(), "ev", "propbomb", "1")
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d-byte POM: %v, %d bytes allocated, err %v", len(data), elapsed, alloc, err)
			if elapsed > 500*time.Millisecond || alloc > 64<<20 {
				t.Errorf("took %v and allocated %d bytes", elapsed, alloc)
			}
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if tc.p0 == "" && m.Dependencies[0].Version != "" {
					t.Errorf("version = %q", m.Dependencies[0].Version)
				}
				return
			}
			if !errors.Is(err, ErrExpansion) || len(err.Error()) > 300 {
				t.Fatalf("err = %v, want a short ErrExpansion", err)
			}
		})
	}
}

func TestExpansionLimits(t *testing.T) {
	deep := map[string]string{"p0": "x"}
	for i := 1; i <= MaxExpansionDepth+1; i++ {
		deep[fmt.Sprintf("p%d", i)] = fmt.Sprintf("${p%d}", i-1)
	}
	if _, err := Interpolate(fmt.Sprintf("${p%d}", MaxExpansionDepth+1), deep); !errors.Is(err, ErrExpansion) {
		t.Errorf("nesting %d deep: err = %v, want ErrExpansion", MaxExpansionDepth+1, err)
	}
	if got, err := Interpolate(fmt.Sprintf("${p%d}", MaxExpansionDepth-1), deep); err != nil || got != "x" {
		t.Errorf("nesting %d deep: %q, %v", MaxExpansionDepth-1, got, err)
	}
	big := map[string]string{"a": strings.Repeat("y", MaxExpansion/2+1)}
	if _, err := Interpolate("${a}${a}", big); !errors.Is(err, ErrExpansion) {
		t.Errorf("a value over MaxExpansion: err = %v", err)
	}
	// Ivy's regular expression: no newline inside ${…}; the first } closes.
	vars := map[string]string{"a": "A", "a${b": "AB", "b": "B"}
	for in, want := range map[string]string{
		"${a}-${b}":      "A-B",
		"${a${b}}":       "AB}",
		"${a\n}${b}":     "${a\n}B",
		"$${a}":          "$A",
		"${}":            "${}",
		"${unknown}${a}": "${unknown}A",
	} {
		got, err := Interpolate(in, vars)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Interpolate(%q) (-want +got):\n%s", in, diff)
		}
	}
}
