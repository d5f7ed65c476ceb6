package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/testenv"
)

// bigPropsKeys is audit 4's M3 file: 150,000 keys of about 100 bytes,
// 15.6 MB (under the 16 MiB cap). Loading it took 38 s of CPU (103 s on a
// loaded host) and SIGTERM was ignored meanwhile.
const bigPropsKeys = 150_000

// signalSetup is a dry-run and a batch of big properties files, with an
// API server that counts the requests it gets (a cancelled run must not
// create anything).
type signalSetup struct {
	tmp, props, master string
	requests           atomic.Int64
}

func newSignalSetup(t *testing.T) *signalSetup {
	t.Helper()
	s := &signalSetup{tmp: t.TempDir()}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	s.master = "k8s://" + srv.URL
	var b strings.Builder
	for i := range bigPropsKeys {
		k := fmt.Sprintf("spark.x%d=", i)
		b.WriteString(k + strings.Repeat("v", 103-len(k)) + "\n")
	}
	s.props = filepath.Join(s.tmp, "big.properties")
	if err := os.WriteFile(s.props, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", s.tmp)
	t.Setenv("PREBAKE_CACHE", filepath.Join(s.tmp, "cache"))
	t.Setenv("PREBAKE_CONFIG", "")
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	t.Setenv("KUBECONFIG", filepath.Join(s.tmp, "none"))
	return s
}

// argv is one application: the big properties file, a token of its own.
func (s *signalSetup) argv(i int) []string {
	return []string{"--master", s.master, "--deploy-mode", "cluster", "--name", "big" + strconv.Itoa(i),
		"--conf", "spark.kubernetes.container.image=apache/spark:3.5.9",
		"--conf", "spark.kubernetes.authenticate.submission.oauthToken=token-" + strconv.Itoa(i),
		"--properties-file", s.props, "--class", "C", "local:///opt/app.jar"}
}

// runs are the two long runs of the audit: a dry run of one application
// and a batch of 40 (the audit's 60 still ran 570 s after SIGTERM).
func (s *signalSetup) runs(t *testing.T) map[string][]string {
	var batch strings.Builder
	for i := range 40 {
		line, _ := json.Marshal(s.argv(i))
		batch.Write(append(line, '\n'))
	}
	bf := filepath.Join(s.tmp, "batch.jsonl")
	if err := os.WriteFile(bf, []byte(batch.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string][]string{
		"dry-run": append([]string{"submit", "--dry-run", "-o", "yaml", "--submitter", "native", "--spark-version", "3.5.9", "--"}, s.argv(0)...),
		"batch":   {"submit", "--batch", bf, "--submitter", "native", "--spark-version", "3.5.9", "-q", "-o", "json"},
	}
}

// check asserts a run ended by SIGTERM: 80 saying so, soon (at most the
// rest of one file's load: about a second of CPU; the wall time is
// bounded generously for a loaded host), no objects or results printed
// and no request to the API server.
func (s *signalSetup) check(t *testing.T, code int, took, cpu time.Duration, stdout, stderr string) {
	t.Helper()
	t.Logf("exit %d %v (CPU %v) after SIGTERM: %s", code, took.Round(time.Millisecond), cpu.Round(time.Millisecond), strings.TrimSpace(stderr))
	if code != exitcode.DriverFailed || !strings.Contains(stderr, "cancelled") {
		t.Errorf("exit %d after SIGTERM, want %d (cancelled)\n%s", code, exitcode.DriverFailed, stderr)
	}
	if (cpu > 5*time.Second && !raceEnabled) || took > 30*time.Second { // -race on a loaded machine: no CPU bound
		t.Errorf("ended %v (CPU %v) after SIGTERM, want within a few seconds", took, cpu)
	}
	// Nothing on stdout but, with -o json, the error document.
	var doc struct {
		ExitCode int             `json:"exitCode"`
		Results  json.RawMessage `json:"results"`
	}
	if stdout != "" && (json.Unmarshal([]byte(stdout), &doc) != nil || doc.ExitCode != exitcode.DriverFailed || doc.Results != nil) {
		t.Errorf("stdout after SIGTERM: %.300s", stdout)
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("the API server got %d requests: a cancelled run created something", n)
	}
}

// TestSIGTERMStopsBigPropsRuns reproduces audit 4, M3 in process: SIGTERM
// during a dry run or a batch of big properties files ends it with 80 at
// once, printing and submitting nothing. The run is inside execute, whose
// NotifyContext holds SIGTERM; the test holds it too, so a signal that
// comes before execute's is harmless, and it signals every 50 ms until the
// run ends (the first after execute's NotifyContext cancels it, long
// before a 15.6 MB file is loaded).
func TestSIGTERMStopsBigPropsRuns(t *testing.T) {
	s := newSignalSetup(t)
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGTERM)
	defer signal.Stop(guard)
	for name, args := range s.runs(t) {
		t.Run(name, func(t *testing.T) {
			type outcome struct {
				code           int
				stdout, stderr string
			}
			done := make(chan outcome, 1)
			go func() {
				code, out, errs := runPrebake(context.Background(), args...)
				done <- outcome{code, out, errs}
			}()
			var first time.Time
			var cpu0 time.Duration
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			deadline := time.After(60 * time.Second)
			for {
				select {
				case o := <-done:
					if first.IsZero() {
						t.Fatalf("ended before any SIGTERM: exit %d\n%s", o.code, o.stderr)
					}
					s.check(t, o.code, time.Since(first), cpuSelf()-cpu0, o.stdout, o.stderr)
					return
				case <-tick.C:
					if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
						t.Fatal(err)
					}
					if first.IsZero() {
						first, cpu0 = time.Now(), cpuSelf()
					}
				case <-deadline:
					t.Fatal("still running 60s after the first SIGTERM")
				}
			}
		})
	}
}

// TestSIGTERMStopsBigPropsCLI is the same with the built CLI and a real
// SIGTERM, sent once the process has read the 15.6 MB file
// (/proc/PID/io: its signal handling is set up before it reads anything).
func TestSIGTERMStopsBigPropsCLI(t *testing.T) {
	bin := testenv.Prebake(t)
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skip("needs /proc/PID/io")
	}
	s := newSignalSetup(t)
	for name, args := range s.runs(t) {
		t.Run(name, func(t *testing.T) {
			c := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			for read := int64(0); read < int64(bigPropsKeys)*100; read = readBytes(c.Process.Pid) {
				select {
				case <-done:
					t.Fatalf("ended before it read the properties file: exit %d\n%s", c.ProcessState.ExitCode(), stderr.String())
				case <-time.After(5 * time.Millisecond):
				}
			}
			start, cpu0 := time.Now(), cpuOf(c.Process.Pid)
			if err := c.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				c.Process.Kill()
				<-done
				t.Fatalf("still running 60s after SIGTERM\n%s", stderr.String())
			}
			cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime() - cpu0
			s.check(t, c.ProcessState.ExitCode(), time.Since(start), cpu, stdout.String(), stderr.String())
		})
	}
}

// readBytes is the bytes process pid has read (rchar of /proc/PID/io; 0
// when unknown).
func readBytes(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// cpuSelf is the CPU time this process has used.
func cpuSelf() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuOf is the CPU time process pid has used (utime + stime of
// /proc/PID/stat, in clock ticks of 10 ms; 0 when unknown).
func cpuOf(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, rest, _ := strings.Cut(string(data), ") ") // after the command name
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
