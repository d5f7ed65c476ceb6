// Command cluster runs the tests' real single-node Kubernetes
// (internal/testenv/cluster) as the test bed of a run: it publishes the
// node in cluster.StateFile, and every test binary's cluster.Start attaches
// to it instead of launching its own (issue 43). `make cluster` starts it
// in the background for a person and prints the kubeconfig, the registry
// and the Spark base images; `make cluster-down` stops it and leaves
// nothing running; `make test` wraps the test run in `run`, which starts
// the bed unless one is up and stops only what it started.
//
//	go run ./hack/cluster up   [-dir .cluster]
//	go run ./hack/cluster down [-dir .cluster]
//	go run ./hack/cluster run  [-dir .cluster] -- COMMAND [ARG...]
//
// It needs root, and the binaries hack/infra.sh builds; without them `run`
// runs the command alone (the tests then skip or launch as before).
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
	"github.com/prebake/prebake/internal/testenv/cluster"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down [-dir DIR] | run [-dir DIR] -- COMMAND [ARG...]")
		os.Exit(64)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".cluster", "state directory (logs, kubeconfig, pid)")
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err == nil {
		switch os.Args[1] {
		case "up":
			err = up(abs)
		case "serve":
			err = serve(abs)
		case "down":
			err = down(abs)
		case "run":
			var code int
			code, err = run(abs, fs.Args())
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

func pidFile(dir string) string  { return dir + ".pid" }
func infoFile(dir string) string { return dir + ".info" }
func logFile(dir string) string  { return dir + ".log" }

// up starts `serve` in the background and waits for it to write the info
// file (or to exit).
func up(dir string) error {
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
	cmd := exec.Command(self, "serve", "-dir", dir)
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
	fmt.Fprintf(os.Stderr, "starting the cluster (log %s) ...\n", logFile(dir))
	for {
		if info, err := os.ReadFile(infoFile(dir)); err == nil {
			fmt.Print(string(info))
			return nil
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logFile(dir))
			return fmt.Errorf("the cluster did not start (%v):\n%s", err, log)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// serve launches the cluster, writes the info file and stops the cluster
// on SIGTERM or SIGINT.
func serve(dir string) error {
	ctx := context.Background()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	c, err := cluster.Launch(ctx, cluster.WithDir(dir), cluster.WithLog(func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+f+"\n", a...)
	}))
	if err != nil {
		return err
	}
	defer func() {
		_ = os.Remove(cluster.StateFile)
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop: %v\n", err)
		}
		_ = os.Remove(pidFile(dir))
		_ = os.Remove(infoFile(dir))
	}()
	var b strings.Builder
	fmt.Fprintf(&b, "kubeconfig:  %s\n", c.Kubeconfig)
	fmt.Fprintf(&b, "api server:  %s\n", c.Server)
	fmt.Fprintf(&b, "registry:    %s (plain http)\n", c.Registry)
	fmt.Fprintf(&b, "test image:  %s\n", c.TestImage)
	for _, v := range testenv.SparkVersions {
		ref, err := c.SparkImage(ctx, v)
		if err != nil {
			ref = "not available: " + err.Error()
		}
		fmt.Fprintf(&b, "spark %-6s %s\n", v+":", ref)
	}
	fmt.Fprintf(&b, "logs:        %s/*.log\nstop it with `make cluster-down`\n", c.Dir)
	if err := c.Publish(cluster.StateFile); err != nil {
		return err
	}
	if err := os.WriteFile(infoFile(dir), []byte(b.String()), 0o644); err != nil {
		return err
	}
	<-sig
	return nil
}

// down stops the background cluster and waits until it has stopped.
func down(dir string) error {
	pid, err := readPid(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Println("no cluster running")
		return nil
	}
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		_ = os.Remove(pidFile(dir))
		fmt.Println("no cluster running")
		return nil
	}
	for i := 0; i < 240; i++ {
		if syscall.Kill(pid, 0) != nil {
			fmt.Println("cluster stopped")
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("pid %d still running after 60s (log %s)", pid, logFile(dir))
}

// run runs args with the test bed up: the one running (cluster.StateFile),
// else one it starts (up) and stops (down) when args end. It returns args'
// exit code. Without root, with the JVM tier off (PREBAKE_JVM=0) or when
// the bed cannot start, args run alone.
func run(dir string, args []string) (int, error) {
	if len(args) == 0 {
		return 0, errors.New("run: no command (run -- COMMAND [ARG...])")
	}
	started := false
	switch _, err := cluster.Attach(context.Background(), cluster.StateFile); {
	case err == nil:
		fmt.Fprintf(os.Stderr, "test bed: the running one (%s)\n", cluster.StateFile)
	case os.Geteuid() != 0 || os.Getenv("PREBAKE_JVM") == "0":
		fmt.Fprintln(os.Stderr, "test bed: none (the real node needs root and the JVM tier)")
	default:
		start := time.Now()
		if err := up(dir); err != nil {
			fmt.Fprintf(os.Stderr, "test bed: not started, each test binary launches its own node: %v\n", err)
			break
		}
		started = true
		fmt.Fprintf(os.Stderr, "test bed: up in %s\n", time.Since(start).Round(time.Second))
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
