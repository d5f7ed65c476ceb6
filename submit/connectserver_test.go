package submit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseConnectServerArgv: a start-connect-server.sh command line is
// spark-submit's argv after the script's --class SparkConnectServer --name
// "Spark Connect server" (sbin/start-connect-server.sh, spark-daemon.sh
// submit): the options are spark-submit's, a leading --wait is the script's,
// a trailing --help/-h prints the script's usage, and Tokens gives the
// command line back.
func TestParseConnectServerArgv(t *testing.T) {
	type view struct {
		Action, Primary, Class, Name, Packages string
		Opts, AppArgs                          []string
	}
	tests := []struct {
		name string
		args []string
		want view
	}{
		{name: "packages and connect confs", args: []string{"/opt/spark/sbin/start-connect-server.sh", "--packages", "org.apache.spark:spark-avro_2.13:4.0.5", "--conf", "spark.connect.grpc.binding.port=15003"},
			want: view{Action: ActionSubmit, Primary: ResourceSparkInternal, Class: ConnectServerClass, Name: ConnectServerName, Packages: "org.apache.spark:spark-avro_2.13:4.0.5",
				Opts: []string{ConnectServerScript, "--class", "--name", "--packages", "--conf"}}},
		{name: "--wait and the user's --name wins", args: []string{"start-connect-server.sh", "--wait", "--name", "mine", "--master=local[2]", "--conf", "spark.jars.packages=g:a:1"},
			want: view{Action: ActionSubmit, Primary: ResourceSparkInternal, Class: ConnectServerClass, Name: "mine",
				Opts: []string{ConnectServerScript, "--class", "--name", "--name", "--master", "--conf"}}},
		{name: "mixed arguments stay in place", args: []string{"./sbin/start-connect-server.sh", "extra", "--packages", "g:a:1", "tail"},
			want: view{Action: ActionSubmit, Primary: ResourceSparkInternal, Class: ConnectServerClass, Name: ConnectServerName, Packages: "g:a:1",
				Opts: []string{ConnectServerScript, "--class", "--name", "--packages"}, AppArgs: []string{"extra", "tail"}}},
		{name: "usage", args: []string{"start-connect-server.sh", "--packages", "g:a:1", "-h"},
			want: view{Action: ActionHelp, Opts: []string{ConnectServerScript}, AppArgs: []string{"--packages", "g:a:1", "-h"}}},
		{name: "bare script", args: []string{"start-connect-server.sh"},
			want: view{Action: ActionSubmit, Primary: ResourceSparkInternal, Class: ConnectServerClass, Name: ConnectServerName,
				Opts: []string{ConnectServerScript, "--class", "--name"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseArgv(tt.args)
			if err != nil {
				t.Fatalf("ParseArgv(%q): %v", tt.args, err)
			}
			got := view{Action: a.Action, Primary: a.Primary, AppArgs: a.AppArgs}
			got.Class, _ = a.Flag("--class")
			got.Name, _ = a.Flag("--name")
			got.Packages, _ = a.Flag("--packages")
			for _, o := range a.Options {
				got.Opts = append(got.Opts, o.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseArgv(%q) (-want +got):\n%s", tt.args, diff)
			}
			if diff := cmp.Diff(tt.args, a.Tokens()); diff != "" {
				t.Errorf("Tokens() does not give the command line back (-want +got):\n%s", diff)
			}
			if !a.IsConnectServer() {
				t.Errorf("IsConnectServer() = false")
			}
		})
	}
	if _, err := ParseArgv([]string{"start-connect-server.sh", "--master", "yarn", "--deploy-mode", "cluster"}); err == nil || !strings.Contains(err.Error(), "not applicable to Spark Connect server") {
		t.Errorf("cluster deploy mode: %v, want Spark's refusal", err)
	}
	// A value option without its value is spark-submit's usage error.
	if _, err := ParseArgv([]string{"start-connect-server.sh", "--packages"}); err == nil {
		t.Errorf("--packages without a value: want spark-submit's usage error")
	}
}

// TestConnectServerProgram: the script to run for a command line.
func TestConnectServerProgram(t *testing.T) {
	tests := []struct {
		args, rest []string
		home, want string
		ok         bool
	}{
		{args: []string{"start-connect-server.sh", "--wait"}, home: "/opt/spark", want: "/opt/spark/sbin/start-connect-server.sh", rest: []string{"--wait"}, ok: true},
		{args: []string{"/x/sbin/start-connect-server.sh"}, home: "/opt/spark", want: "/x/sbin/start-connect-server.sh", rest: []string{}, ok: true},
		{args: []string{"start-connect-server.sh"}, want: "start-connect-server.sh", rest: []string{}, ok: true},
		{args: []string{"--master", "local"}, rest: []string{"--master", "local"}},
	}
	for _, tt := range tests {
		prog, rest, ok := ConnectServerProgram(tt.args, tt.home)
		if diff := cmp.Diff([]any{tt.want, tt.rest, tt.ok}, []any{prog, rest, ok}); diff != "" {
			t.Errorf("ConnectServerProgram(%q, %q) (-want +got):\n%s", tt.args, tt.home, diff)
		}
	}
}
