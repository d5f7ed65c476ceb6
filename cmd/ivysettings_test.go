package cmd

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestIvySettingsCLI: --ivy-settings and the argv's spark.jars.ivySettings
// give the settings' chain (here a file: ibiblio over the demo repository,
// with no other repository); rewrite removes the key; unsupported content
// is exit 65 naming the element.
func TestIvySettingsCLI(t *testing.T) {
	root, tmp := isolatedCLI(t)
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("ivysettings.xml", `<ivysettings><property name="demo" value="`+filepath.Join(root, "testdata", "demo-repo")+`"/>
<settings defaultResolver="demo"/><resolvers><ibiblio name="demo" root="file://${demo}/" m2compatible="true"/></resolvers></ivysettings>`)
	bad := write("bad.xml", `<ivysettings><settings defaultResolver="s"/><resolvers><sftp name="s"/></resolvers></ivysettings>`)
	cache := filepath.Join(tmp, "cache")
	ctx := context.Background()

	// --offline from an empty cache: file: repositories are read in place.
	code, out, errs := runPrebake(ctx, "resolve", "-q", "-o", "names", "--offline", "--cache", cache, "--ivy-settings", good, "org.slf4j:slf4j-api:2.0.7")
	if code != 0 || strings.TrimSpace(out) != "org.slf4j_slf4j-api-2.0.7.jar" {
		t.Fatalf("resolve --ivy-settings: exit %d, stdout %q\n%s", code, out, errs)
	}

	code, out, errs = runPrebake(ctx, "rewrite", "-q", "--cache", cache, "--", "--master", "local[1]",
		"--conf", "spark.jars.ivySettings="+good, "--packages", "org.slf4j:slf4j-api:2.0.7", "app.py")
	if code != 0 || strings.Contains(out, "ivySettings") || !strings.Contains(out, "org.slf4j_slf4j-api-2.0.7.jar") {
		t.Fatalf("rewrite with spark.jars.ivySettings: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"resolve", "--cache", cache, "--ivy-settings", bad, "org.slf4j:slf4j-api:2.0.7"}, exitcode.DataErr, "resolver type sftp"},
		{[]string{"rewrite", "--cache", cache, "--ivy-settings", bad, "--", "--conf", "spark.jars.ivySettings=" + good, "--packages", "org.slf4j:slf4j-api:2.0.7", "app.py"}, exitcode.Usage, "differ"},
		{[]string{"resolve", "--cache", cache, "--ivy-settings", "https://h.example/ivysettings.xml", "org.slf4j:slf4j-api:2.0.7"}, exitcode.Usage, "scheme https"},
	} {
		code, _, errs := runPrebake(ctx, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("prebake %s: exit %d, want %d with %q\n%s", strings.Join(tc.args, " "), code, tc.code, tc.msg, errs)
		}
	}
}

// TestIvySettingsHostileCLI (security-3 N2, N3, N10, N14): the audit's
// settings files end at once with 65 naming the file: the CPU bomb (p_n =
// 100 × ${p_(n-1)}, 10^12 expansions for Ivy), the 4 MiB memory bomb
// (105,996 × a 65,000-byte value), a FIFO include, a non-XML include.
func TestIvySettingsHostileCLI(t *testing.T) {
	_, tmp := isolatedCLI(t)
	const tail = `<settings defaultResolver="r${p6}"/><resolvers><ibiblio name="r" m2compatible="true"/></resolvers></ivysettings>`
	var cpu strings.Builder
	cpu.WriteString("<ivysettings>")
	for i := 6; i >= 1; i-- {
		fmt.Fprintf(&cpu, `<property name="p%d" value="%s"/>`, i, strings.Repeat(fmt.Sprintf("${p%d}", i-1), 100))
	}
	cpu.WriteString(`<property name="p0" value=""/>` + tail)
	var mem strings.Builder
	mem.WriteString(`<ivysettings><property name="b" value="` + strings.Repeat("x", 65000) + `"/>`)
	for i := 0; i < 105996; i++ {
		fmt.Fprintf(&mem, `<property name="q%d" value="${b}"/>`, i)
	}
	mem.WriteString(`<property name="p6" value=""/>` + tail)
	fifo := filepath.Join(tmp, "fifo1")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	shadow := filepath.Join(tmp, "shadow")
	files := map[string]string{
		"cpubomb6.xml": cpu.String(),
		"mem4m.xml":    mem.String(),
		"fifo.xml":     `<ivysettings><include file="` + fifo + `"/>` + tail,
		"propfifo.xml": `<ivysettings><properties file="` + fifo + `"/>` + tail,
		"shadow.xml":   `<ivysettings><include file="` + shadow + `"/>` + tail,
		"filehost.xml": `<ivysettings><include url="file://127.0.0.1:18093/etc/passwd"/>` + tail,
		"shadow":       "root:$6$TOPSECRET$abc:19000:0:99999:7:::\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ file, msg string }{
		{"cpubomb6.xml", "variables expand past 1048576 substitutions"},
		{"mem4m.xml", "variables expand past 16777216 bytes"},
		{"fifo.xml", fifo + " is a named pipe (FIFO), not a regular file"},
		{"propfifo.xml", fifo + " is a named pipe (FIFO), not a regular file"},
		{"shadow.xml", "malformed XML in " + shadow + ": line 1: content is not allowed in prolog"},
		{"filehost.xml", "with host 127.0.0.1:18093 is not a local file"},
	} {
		start := time.Now()
		code, _, errs := runPrebake(context.Background(), "resolve", "-q", "--ivy-settings", filepath.Join(tmp, tc.file),
			"--cache", filepath.Join(tmp, "cache"), "-o", "names", "org.slf4j:slf4j-api:2.0.7")
		d := time.Since(start)
		if code != exitcode.DataErr || !strings.Contains(errs, tc.msg) || !strings.Contains(errs, tc.file) {
			t.Errorf("%s: exit %d, want 65 with %q\n%s", tc.file, code, tc.msg, errs)
		}
		if d > 2*time.Second || strings.Contains(errs, "TOPSECRET") {
			t.Errorf("%s: took %v (the audit: 27 s to forever, or a hang); stderr %s", tc.file, d, errs)
		}
	}
}

// TestSignalStopsResolve: SIGTERM while a repository accepts connections
// and never answers (each attempt would wait 30 s) ends the run within a
// second, exit 75 (interrupted), as SIGINT/SIGTERM do in every phase.
func TestSignalStopsResolve(t *testing.T) {
	_, tmp := isolatedCLI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	type outcome struct {
		code int
		errs string
	}
	done := make(chan outcome, 1)
	go func() {
		code, _, errs := runPrebake(context.Background(), "resolve", "-q", "--no-default-repositories",
			"--repositories", "http://"+ln.Addr().String()+"/", "--cache", filepath.Join(tmp, "cache"), "-o", "names", "org.slf4j:slf4j-api:2.0.7")
		done <- outcome{code, errs}
	}()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	select {
	case c := <-accepted:
		conns = append(conns, c)
	case o := <-done:
		t.Fatalf("resolve ended before it reached the repository: exit %d\n%s", o.code, o.errs)
	case <-time.After(30 * time.Second):
		t.Fatal("resolve never reached the repository")
	}
	// The run is inside execute, whose NotifyContext holds SIGTERM: the
	// test process is not killed.
	start := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-done:
		if d := time.Since(start); d > time.Second {
			t.Errorf("SIGTERM: ended after %v, want under 1s", d)
		}
		if o.code != exitcode.DriverFailed || !strings.Contains(o.errs, "cancelled") {
			t.Errorf("SIGTERM: exit %d, want 80 (cancelled)\n%s", o.code, o.errs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not stop resolve within 10s")
	}
}
