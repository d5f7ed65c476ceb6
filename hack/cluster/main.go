// Command cluster runs the tests' real single-node Kubernetes
// (internal/testenv/cluster) for a person: `make cluster` starts it in the
// background and prints the kubeconfig, the registry and the Spark base
// images; `make cluster-down` stops it and leaves nothing running.
//
//	go run ./hack/cluster up   [-dir .cluster]
//	go run ./hack/cluster down [-dir .cluster]
//
// It needs root, and the binaries hack/infra.sh builds.
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
		fmt.Fprintln(os.Stderr, "usage: cluster up|down [-dir DIR]")
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
		default:
			err = fmt.Errorf("unknown command %q: want up or down", os.Args[1])
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

func readPid(dir string) (int, error) {
	b, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
