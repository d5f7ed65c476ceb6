package resolver

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/javaprops"
)

// ivsFuzzSeeds are the settings files of the oracle cases and the audit's
// bomb shapes.
func ivsFuzzSeeds(f *testing.F) []string {
	files, err := filepath.Glob(filepath.Join(ivsDir, "cases", "*.xml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	var out []string
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, string(data))
	}
	return append(out, ivsCPUBomb(3, 10), ivsCPUBomb(4, 100), ivsCPUBomb(6, 100), ivsMemBomb(300),
		`<ivysettings><properties file="/dev/zero"/></ivysettings>`,
		`<ivysettings><include file="ivysettings.xml"/></ivysettings>`,
		"root:$6$x$y:19000:0:99999:7:::\n",
		"\ufeff<ivysettings/>",
		`<ivysettings><property name="a" value="${b}${b}"/><property name="b" value="${a}"/><settings defaultResolver="${a}"/></ivysettings>`)
}

// FuzzIvySettings: any settings file loads or fails with a classified
// error (never a panic, never "internal"), in bounded time and memory.
func FuzzIvySettings(f *testing.F) {
	for _, s := range ivsFuzzSeeds(f) {
		f.Add(s)
	}
	dir := f.TempDir()
	p := filepath.Join(dir, "ivysettings.xml")
	env := ivyEnv{home: "/home/u", user: "u", cwd: dir, lookupEnv: func(string) (string, bool) { return "", false }}
	f.Fuzz(func(t *testing.T, doc string) {
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		// A hang kills the worker, so the fuzzer keeps the input.
		hang := time.AfterFunc(20*time.Second, func() { panic("ivy settings load hangs on: " + strconv.Quote(doc)) })
		defer hang.Stop()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		s, err := loadIvySettingsFile(context.Background(), p, env)
		if err == nil {
			_, err = s.chain(nil)
		}
		d := time.Since(start)
		runtime.ReadMemStats(&after)
		if err != nil {
			if code := exitcode.Code(err); code == exitcode.Internal {
				t.Fatalf("unclassified error: %v", err)
			}
		}
		// Generous: a fuzzing worker shares the machine.
		if d > 5*time.Second {
			t.Errorf("took %v", d)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 512<<20 {
			t.Errorf("allocated %d bytes", alloc)
		}
	})
}

// FuzzIvySubst: the memoized expansion agrees with Ivy's recursive one
// (naiveSubst) for any variables and value, whenever the latter ends
// within the budget.
func FuzzIvySubst(f *testing.F) {
	f.Add("a=A\nb=${a}${a}\nc=${b}${b}${x}\n", "${c}-${a${a}}")
	f.Add("c1=${c2}\nc2=${c1}\n", "${c1}")
	f.Add("p2=${p1}${p1}${p1}\np1=${p0}${p0}\np0=z\n", "${p2}${p2}")
	f.Add("ivy.settings.dir=/g\n", "${ivy.settings.dir}")
	f.Fuzz(func(t *testing.T, props, v string) {
		entries, err := javaprops.Parse([]byte(props))
		if err != nil {
			return
		}
		vars := map[string]string{}
		for _, kv := range entries {
			vars[kv.Key] = kv.Value
		}
		local := map[string]string{"ivy.settings.dir": "/local"}
		s := &ivySettingsFile{path: "/x/ivysettings.xml", vars: vars, ctx: context.Background()}
		got, err := s.substLocal(local, v)
		if err != nil && strings.Contains(err.Error(), "in all") {
			return // over the budget: Ivy's would take as long
		}
		steps := maxIvyExpansionSteps
		want, werr := naiveSubst(s, local, v, &steps)
		if werr != nil && werr.Error() == "gave up" {
			if err != nil {
				return // both stopped, on different bounds
			}
			t.Fatalf("%q: Ivy's expansion passes the budget, the memoized one did not notice: %q, %v", v, got, err)
		}
		if (err != nil) != (werr != nil) || got != want {
			t.Fatalf("%q with %q: got %q, %v; Ivy's gives %q, %v", v, props, got, err, want, werr)
		}
	})
}
