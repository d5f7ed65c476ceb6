package repo

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/resolver/ivysettings"
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
	env := ivysettings.Env{Home: "/home/u", User: "u", Cwd: dir, LookupEnv: func(string) (string, bool) { return "", false }}
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
		s, err := ivysettings.Load(context.Background(), p, env)
		if err == nil {
			_, err = ivyFile{s}.chain(nil)
		}
		d := time.Since(start)
		runtime.ReadMemStats(&after)
		if err != nil {
			if code := errdefs.KindOf(err); code == errdefs.Internal || code == errdefs.Unknown {
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
