package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/resolver/ivysettings"
)

// ivsCPUBomb is the audit's (security-3 N2) CPU bomb: p_n = fan × ${p_(n-1)}
// down to p0 = "", defined from p_n down, so each is stored unexpanded,
// and the default resolver r${p_n}: Ivy expands fan^n times for an empty
// result.
//
//	props = ''.join(f'<property name="p{i}" value="{("${p%d}" % (i-1)) * fan}"/>' for i in range(n, 0, -1)) + '<property name="p0" value=""/>'
func ivsCPUBomb(n, fan int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<ivysettings>\n")
	for i := n; i >= 1; i-- {
		fmt.Fprintf(&b, `<property name="p%d" value="%s"/>`, i, strings.Repeat(fmt.Sprintf("${p%d}", i-1), fan))
	}
	b.WriteString(`<property name="p0" value=""/>` + "\n")
	fmt.Fprintf(&b, `<settings defaultResolver="r${p%d}"/>`+"\n", n)
	b.WriteString(`<resolvers><ibiblio name="r" m2compatible="true"/></resolvers>` + "\n</ivysettings>\n")
	return b.String()
}

// ivsMemBomb is the audit's (N3) memory bomb: b = 65,000 × "x", then n
// properties qI = ${b}, each 65,000 bytes under the 64 KiB per value.
func ivsMemBomb(n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<ivysettings>\n")
	fmt.Fprintf(&b, `<property name="b" value="%s"/>`+"\n", strings.Repeat("x", 65000))
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `<property name="q%d" value="${b}"/>`+"\n", i)
	}
	b.WriteString(`<settings defaultResolver="r"/>` + "\n")
	b.WriteString(`<resolvers><ibiblio name="r" m2compatible="true"/></resolvers>` + "\n</ivysettings>\n")
	return b.String()
}

// measure runs fn and returns how long it took and what it allocated.
func measure(fn func()) (time.Duration, uint64) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	fn()
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	return d, after.TotalAlloc - before.TotalAlloc
}

// TestIvySettingsBombs: the audit's CPU and memory bombs (N2, N3) fail with
// 65 naming the file, at once and in a few MB; the audit measured 27 s and
// "forever" (n=4, n=6), 2.5 GB and a fatal out of memory (N3).
func TestIvySettingsBombs(t *testing.T) {
	const maxTime, maxAlloc = time.Second, 100 << 20
	for _, tc := range []struct {
		name, doc string
		size      int // the audit's file size, for the record (ours differ by the XML declaration)
	}{
		{"cpu n=4 fan 100", ivsCPUBomb(4, 100), 2328},
		{"cpu n=6 fan 100", ivsCPUBomb(6, 100), 3390},
		{"cpu n=12 fan 100", ivsCPUBomb(12, 100), 0},
		{"memory 20,000 × 65,000 bytes", ivsMemBomb(20000), 834 << 10},
		{"memory 105,996 × 65,000 bytes (4 MiB)", ivsMemBomb(105996), 4193925},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.doc) > ivysettings.MaxFileSize {
				t.Fatalf("the file is %d bytes, over the 4 MiB cap", len(tc.doc))
			}
			dir := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": tc.doc})
			var err error
			d, alloc := measure(func() { _, err = ivsChain(t, dir, nil) })
			t.Logf("%d bytes (audit: %d): %v, %.1f MB allocated: %v", len(tc.doc), tc.size, d, float64(alloc)/(1<<20), err)
			if got := errdefs.KindOf(err); got != errdefs.Invalid || !errors.Is(err, errdefs.Invalid) {
				t.Fatalf("exit code %d, want 65: %v", got, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "ivysettings.xml") || !strings.Contains(msg, "variables expand past") {
				t.Errorf("error %q does not name the file and the budget", msg)
			}
			if d > maxTime || alloc > maxAlloc {
				t.Errorf("took %v and %d bytes, want under %v and %d", d, alloc, maxTime, maxAlloc)
			}
		})
	}
}

// TestIvySettingsBigButLegal: n=3 (10^6 substitutions, as Ivy counts them)
// is under the budget and resolves, in far less than the 0.67 s the audit
// measured without memoization; one more level of nesting repeated 4 times
// in attributes, each use under the budget, fails as their sum passes it.
func TestIvySettingsBigButLegal(t *testing.T) {
	dir := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": ivsCPUBomb(3, 100)})
	var chain []*entry
	var err error
	d, alloc := measure(func() { chain, err = ivsChain(t, dir, nil) })
	t.Logf("n=3: %v, %.1f MB allocated", d, float64(alloc)/(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"r https://repo1.maven.org/maven2/"}, describe(chain)); diff != "" {
		t.Errorf("chain (-want +got):\n%s", diff)
	}
	if d > 500*time.Millisecond {
		t.Errorf("took %v", d)
	}

	// ${q} costs 300,000 substitutions: three uses pass, four do not.
	doc := func(uses int) string {
		var b strings.Builder
		b.WriteString(`<ivysettings><property name="q" value="` + strings.Repeat("${p2}", 30) + `"/>`)
		b.WriteString(`<property name="p2" value="` + strings.Repeat("${p1}", 100) + `"/>`)
		b.WriteString(`<property name="p1" value="` + strings.Repeat("${p0}", 100) + `"/><property name="p0" value=""/>`)
		for i := 0; i < uses; i++ {
			fmt.Fprintf(&b, `<property name="use%d" value="${q}" override="false"/>`, i)
		}
		b.WriteString(`<settings defaultResolver="r"/><resolvers><ibiblio name="r" m2compatible="true"/></resolvers></ivysettings>`)
		return b.String()
	}
	if _, err := ivsChain(t, m2test.WriteFiles(t, map[string]string{"ivysettings.xml": doc(3)}), nil); err != nil {
		t.Errorf("3 uses: %v", err)
	}
	_, err = ivsChain(t, m2test.WriteFiles(t, map[string]string{"ivysettings.xml": doc(4)}), nil)
	if errdefs.KindOf(err) != errdefs.Invalid || !strings.Contains(fmt.Sprint(err), "1048576 substitutions in all") {
		t.Errorf("4 uses: %v, want 65 naming the budget", err)
	}
}

// TestIvySettingsCancel: a cancelled context stops a load mid-expansion
// (the environment lookup cancels it: nothing in a legal file is slow
// enough to race a timer) with the context's error, a timeout kind (75).
func TestIvySettingsCancel(t *testing.T) {
	dir := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": strings.Replace(ivsCPUBomb(3, 100),
		`<property name="p0" value=""/>`, `<properties environment="env"/><property name="p0" value="${env.CANCEL}"/>`, 1)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := ivysettings.Env{Home: "/home/u", LookupEnv: func(name string) (string, bool) {
		if name == "CANCEL" {
			cancel()
		}
		return "", false
	}}
	start := time.Now()
	_, err := ivysettings.Load(ctx, filepath.Join(dir, "ivysettings.xml"), env)
	if !errors.Is(err, context.Canceled) || errdefs.KindOf(err) != errdefs.Timeout {
		t.Fatalf("got %v (code %d), want context.Canceled, 75", err, errdefs.KindOf(err))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	if !strings.Contains(err.Error(), "ivysettings.xml") {
		t.Errorf("error %q does not name the file", err)
	}

	// Cancelled before: the XML loop stops at once too.
	done, stop := context.WithCancel(context.Background())
	stop()
	if _, err := ivysettings.Load(done, filepath.Join(dir, "ivysettings.xml"), env); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestIvySettingsLocalFiles (N10, N14): <include> and <properties file>
// name regular files only (a FIFO or a device would hang or never end, a
// directory is no file), and an include must be XML (Spark: "Content is
// not allowed in prolog"); each is 65 naming the file, at once.
func TestIvySettingsLocalFiles(t *testing.T) {
	const tail = `<settings defaultResolver="a"/><resolvers><ibiblio name="a" root="https://a.example/" m2compatible="true"/></resolvers></ivysettings>`
	dir := m2test.WriteFiles(t, map[string]string{
		"shadow":      "root:$6$TOPSECRET$abcdefghijklmnop:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
		"credentials": "[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = TOPSECRET\n",
		"id_rsa":      "-----BEGIN OPENSSH PRIVATE KEY-----\nTOPSECRET\n-----END OPENSSH PRIVATE KEY-----\n",
		"trailing":    "<ivysettings/>\nroot:x:0:0::/root:/bin/sh\n",
		"two-roots":   "<ivysettings/><ivysettings/>",
		"empty":       "",
		"bom.xml":     "\ufeff<ivysettings><property name=\"bom\" value=\"ok\"/></ivysettings>",
		"sub/d/x":     "",
	})
	fifo := filepath.Join(dir, "fifo1")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, elem string
		want       []string // in the message, with the file's path
	}{
		{"include fifo", `<include file="` + fifo + `"/>`, []string{"ivysettings.xml:1: <include>: " + fifo + " is a named pipe (FIFO), not a regular file"}},
		{"properties fifo", `<properties file="` + fifo + `"/>`, []string{"ivysettings.xml:1: <properties file>: " + fifo + " is a named pipe"}},
		{"include /dev/zero", `<include file="/dev/zero"/>`, []string{"/dev/zero", "character device"}},
		{"properties /dev/zero", `<properties file="/dev/zero"/>`, []string{"/dev/zero", "character device"}},
		{"include a directory", `<include file="sub/d"/>`, []string{filepath.Join(dir, "sub/d"), "directory"}},
		{"properties a directory", `<properties file="sub"/>`, []string{filepath.Join(dir, "sub"), "directory"}},
		{"include url fifo", `<include url="file://` + fifo + `"/>`, []string{fifo, "named pipe"}},
		{"include shadow", `<include file="shadow"/>`, []string{filepath.Join(dir, "shadow"), "malformed XML", "content is not allowed in prolog"}},
		{"include AWS credentials", `<include file="credentials"/>`, []string{filepath.Join(dir, "credentials"), "malformed XML", "prolog"}},
		{"include a private key", `<include url="file://` + filepath.Join(dir, "id_rsa") + `"/>`, []string{filepath.Join(dir, "id_rsa"), "malformed XML", "prolog"}},
		{"include trailing text", `<include file="trailing"/>`, []string{filepath.Join(dir, "trailing"), "malformed XML", "trailing section"}},
		{"include two roots", `<include file="two-roots"/>`, []string{filepath.Join(dir, "two-roots"), "malformed XML", "second root"}},
		{"include an empty file", `<include file="empty"/>`, []string{filepath.Join(dir, "empty"), "malformed XML", "premature end of file"}},
		{"include file://host", `<include url="file://127.0.0.1:18093/etc/passwd"/>`, []string{"file://127.0.0.1:18093/etc/passwd", "host 127.0.0.1:18093", "not a local file"}},
		{"properties file://host", `<properties file="file://h.example/etc/passwd"/>`, []string{"file://h.example/etc/passwd", "not a local file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "ivysettings.xml"), []byte("<ivysettings>"+tc.elem+tail), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := ivsChain(t, dir, nil)
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
			if got := errdefs.KindOf(err); got != errdefs.Invalid {
				t.Fatalf("exit code %d, want 65: %v", got, err)
			}
			msg := err.Error()
			for _, w := range append(tc.want, "ivysettings.xml") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "TOPSECRET") || strings.Contains(msg, "root:") {
				t.Errorf("the included file's content is in the error: %s", msg)
			}
		})
	}

	// Still accepted: a byte order mark, file://localhost, and the main
	// file as a file: URI with a host (Spark takes the URI's path).
	for _, elem := range []string{`<include file="bom.xml"/>`, `<include url="file://localhost` + filepath.Join(dir, "bom.xml") + `"/>`} {
		if err := os.WriteFile(filepath.Join(dir, "ivysettings.xml"), []byte("<ivysettings>"+elem+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ivsChain(t, dir, nil); err != nil {
			t.Errorf("%s: %v", elem, err)
		}
	}

	// The main file itself: the same XML checks.
	for name, content := range map[string]string{"shadow": "prolog", "trailing": "trailing section", "empty": "premature end of file"} {
		_, err := ivyChainFor(context.Background(), Config{IvySettings: filepath.Join(dir, name), Home: "/home/u"}, defaultOptions(t))
		if errdefs.KindOf(err) != errdefs.Invalid || !strings.Contains(fmt.Sprint(err), content) {
			t.Errorf("--ivy-settings %s: %v, want 65 %q", name, err, content)
		}
	}
}

// TestIvySettingsReadBudget: the files of one load are capped in all (16
// MiB), not only each (4 MiB): the same 3 MiB include read six times fails.
func TestIvySettingsReadBudget(t *testing.T) {
	big := "<ivysettings><!--" + strings.Repeat("x", 3<<20) + "--></ivysettings>"
	main := "<ivysettings>" + strings.Repeat(`<include file="big.xml"/>`, 6) +
		`<settings defaultResolver="a"/><resolvers><ibiblio name="a" root="https://a.example/" m2compatible="true"/></resolvers></ivysettings>`
	dir := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": main, "big.xml": big})
	_, err := ivsChain(t, dir, nil)
	if errdefs.KindOf(err) != errdefs.Invalid || !strings.Contains(fmt.Sprint(err), "larger than 16777216 bytes in all") {
		t.Errorf("got %v, want 65 naming the budget", err)
	}
}
