// Command cluster runs the test bed of a run (issue 43): the tests' real
// single-node Kubernetes (internal/testenv/cluster) and, launched beside
// it in parallel, the registry, nginx, versitygw and the Spark standalone
// master and worker (internal/testenv/bed). It publishes the node in
// cluster.StateFile and the servers in bed.StateFile ($PREBAKE_CLUSTER and
// $PREBAKE_BED name other files), and every test binary attaches to them
// instead of launching its own. `make cluster` starts it in the background
// for a person and prints the kubeconfig, the registry, the Spark base
// images and the servers; `make cluster-down` stops it and leaves nothing
// running; `make test` wraps the test run in `run`, which starts the bed
// unless one is up and stops only what it started.
//
//	go run ./hack/cluster up   [-dir .cluster] [-node=false] [-standalone=false]
//	go run ./hack/cluster down [-dir .cluster]
//	go run ./hack/cluster run  [-dir .cluster] [-node=false] -- COMMAND [ARG...]
//
// The node needs root and the JVM tier (without them `run` starts the
// servers alone); -node=false leaves it out. A server whose binary is
// missing is left out (its tests launch their own, or skip).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/bed"
	"github.com/prebake/prebake/internal/testenv/cluster"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down [-dir DIR] [-node=false] [-standalone=false] | run [-dir DIR] [-node=false] -- COMMAND [ARG...]")
		os.Exit(64)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".cluster", "state directory (logs, kubeconfig, pid)")
	var w what
	fs.BoolVar(&w.node, "node", true, "run the real node (root and the JVM tier)")
	fs.BoolVar(&w.standalone, "standalone", true, "run the Spark standalone master and worker (the JVM tier)")
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err == nil {
		switch os.Args[1] {
		case "up":
			err = up(abs, w)
		case "serve":
			err = serve(abs, w)
		case "down":
			err = down(abs)
		case "run":
			var code int
			code, err = run(abs, w, fs.Args())
			if err == nil {
				os.Exit(code)
			}
		default:
			err = fmt.Errorf("unknown command %q: want up, down or run", os.Args[1])
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cluster: %v\n", err)
		os.Exit(1)
	}
}

func pidFile(dir string) string    { return dir + ".pid" }
func infoFile(dir string) string   { return dir + ".info" }
func logFile(dir string) string    { return dir + ".log" }
func serversDir(dir string) string { return dir + "-servers" }

// what says which of the bed's servers serve runs.
type what struct{ node, standalone bool }

func (w what) args() []string {
	return []string{"-node=" + strconv.FormatBool(w.node), "-standalone=" + strconv.FormatBool(w.standalone)}
}

// up starts `serve` in the background and waits for it to write the info
// file (or to exit).
func up(dir string, w what) error {
	if pid, err := readPid(dir); err == nil && syscall.Kill(pid, 0) == nil {
		return fmt.Errorf("already running (pid %d); `make cluster-down` stops it", pid)
	}
	_ = os.Remove(infoFile(dir))
	logf, err := os.Create(logFile(dir))
	if err != nil {
		return err
	}
	defer logf.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, append([]string{"serve", "-dir", dir}, w.args()...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := os.WriteFile(pidFile(dir), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintf(os.Stderr, "starting the test bed (log %s) ...\n", logFile(dir))
	for {
		if info, err := os.ReadFile(infoFile(dir)); err == nil {
			fmt.Print(string(info))
			return nil
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logFile(dir))
			return fmt.Errorf("the test bed did not start (%v):\n%s", err, log)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// serve launches the node and the servers in parallel, publishes them,
// writes the info file and stops them on SIGTERM or SIGINT.
func serve(dir string, w what) error {
	ctx := context.Background()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	logf := func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+f+"\n", a...)
	}
	start := time.Now()
	var c *cluster.Cluster
	nodeErr := make(chan error, 1)
	if w.node {
		go func() {
			var err error
			c, err = cluster.Launch(ctx, cluster.WithDir(dir), cluster.WithLog(logf))
			if err == nil {
				logf("node: up in %s", time.Since(start).Round(100*time.Millisecond))
			}
			nodeErr <- err
		}()
	} else {
		nodeErr <- nil
	}
	_ = os.RemoveAll(serversDir(dir))
	b, bedErr := bed.Launch(ctx, serversDir(dir), bed.Options{Log: logf})
	if err := <-nodeErr; err != nil || bedErr != nil {
		if c != nil {
			_ = c.Stop()
		}
		if b != nil {
			b.Stop()
		}
		return errors.Join(err, bedErr)
	}
	logf("test bed: up in %s", time.Since(start).Round(100*time.Millisecond))
	clusterState, bedState := cluster.StatePath(), bed.StatePath()
	defer func() {
		if c != nil {
			_ = os.Remove(clusterState)
			if err := c.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "stop: %v\n", err)
			}
		}
		b.Stop() // its published state first
		_ = os.RemoveAll(serversDir(dir))
		_ = os.Remove(pidFile(dir))
		_ = os.Remove(infoFile(dir))
	}()
	var info strings.Builder
	if c != nil {
		fmt.Fprintf(&info, "kubeconfig:  %s\n", c.Kubeconfig)
		fmt.Fprintf(&info, "api server:  %s\n", c.Server)
		fmt.Fprintf(&info, "node registry: %s (plain http)\n", c.Registry)
		fmt.Fprintf(&info, "test image:  %s\n", c.TestImage)
		for _, v := range testenv.SparkVersions {
			ref, err := c.SparkImage(ctx, v)
			if err != nil {
				ref = "not available: " + err.Error()
			}
			fmt.Fprintf(&info, "spark %-6s %s\n", v+":", ref)
		}
		fmt.Fprintf(&info, "logs:        %s/*.log\n", c.Dir)
	}
	st := b.State()
	if r := st.Registry; r != nil {
		fmt.Fprintf(&info, "registry:    %s (plain http; tests use a repository prefix each)\n", r.Host)
	}
	if n := st.Nginx; n != nil {
		fmt.Fprintf(&info, "nginx:       %s (tests serve a directory each)\n", n.URL)
	}
	if s := st.S3; s != nil {
		fmt.Fprintf(&info, "versitygw:   %s (tests make buckets of their own)\n", s.Endpoint)
	}
	// test/spark's shared master and worker run its Spark (the first of
	// SparkVersions); they start once the rest is up.
	sparkHome, ok := testenv.InstalledSparkHome(testenv.SparkVersions[0])
	switch {
	case !w.standalone:
	case !ok:
		logf("standalone: left out (pyspark %s not installed)", testenv.SparkVersions[0])
	default:
		fmt.Fprintf(&info, "standalone:  starting in the background (%s names it when up)\n", bedState)
	}
	fmt.Fprintf(&info, "server logs: %s\nstop it with `make cluster-down`\n", serversDir(dir))
	if c != nil {
		if err := c.Publish(clusterState); err != nil {
			return err
		}
	}
	if bedState != "" {
		if err := b.Publish(bedState); err != nil {
			return err
		}
	}
	if err := os.WriteFile(infoFile(dir), []byte(info.String()), 0o644); err != nil {
		return err
	}
	if w.standalone && ok {
		if err := b.StartStandalone(sparkHome); err != nil {
			return err
		}
	}
	<-sig
	return nil
}

// down stops the background cluster and waits until it has stopped.
func down(dir string) error {
	pid, err := readPid(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Println("no test bed running")
		return nil
	}
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		_ = os.Remove(pidFile(dir))
		fmt.Println("no test bed running")
		return nil
	}
	for i := 0; i < 240; i++ {
		if syscall.Kill(pid, 0) != nil {
			fmt.Println("test bed stopped")
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("pid %d still running after 60s (log %s)", pid, logFile(dir))
}

// run runs args with the test bed up: the one running (the node in
// cluster.StatePath and the servers in bed.StatePath), else one it starts
// (up) and stops (down) when args end. It returns args' exit code.
// Without root or with the JVM tier off (PREBAKE_JVM=0) the bed has no
// node; with the JVM tier off no standalone master. When the bed cannot
// start, args run alone (each test binary launches its own servers).
func run(dir string, w what, args []string) (int, error) {
	if len(args) == 0 {
		return 0, errors.New("run: no command (run -- COMMAND [ARG...])")
	}
	jvm := os.Getenv("PREBAKE_JVM") != "0"
	w.node = w.node && jvm && os.Geteuid() == 0
	w.standalone = w.standalone && jvm
	started := false
	if _, err := cluster.Attach(context.Background(), cluster.StatePath()); err == nil {
		w.node = false // the running node (one per machine)
	}
	switch _, err := bed.Read(bed.StatePath()); {
	case err == nil && !w.node:
		fmt.Fprintf(os.Stderr, "test bed: the running one (%s)\n", bed.StatePath())
	default:
		start := time.Now()
		if err := up(dir, w); err != nil {
			fmt.Fprintf(os.Stderr, "test bed: not started, each test binary launches its own servers: %v\n", err)
			break
		}
		started = true
		fmt.Fprintf(os.Stderr, "test bed: up in %s (node: %v)\n", time.Since(start).Round(time.Second), w.node)
	}
	// An interrupt goes to the command (the terminal's process group); run
	// outlives it to stop the bed it started.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	runErr := cmd.Run()
	if started {
		if err := down(dir); err != nil {
			fmt.Fprintf(os.Stderr, "test bed: %v\n", err)
		}
	}
	var exit *exec.ExitError
	switch {
	case errors.As(runErr, &exit):
		return exit.ExitCode(), nil
	case runErr != nil:
		return 0, runErr
	}
	return 0, nil
}

func readPid(dir string) (int, error) {
	b, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
