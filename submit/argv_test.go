package submit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseArgvSpecialClasses: the launcher (SparkSubmitCommandBuilder,
// Spark 3.5 and 4.x) maps the special --class values to a primary resource
// (specialClasses: repl.Main -> spark-shell; SparkSQLCLIDriver,
// HiveThriftServer2, SparkConnectServer -> spark-internal) and then allows
// mixed arguments: OptionParser.handleUnknown adds every unknown token,
// options included, to the application arguments and keeps parsing, so
// spark-submit options may follow them (sbin/start-thriftserver.sh
// --hiveconf k=v --master yarn, bin/spark-sql -e "…" --packages …).
func TestParseArgvSpecialClasses(t *testing.T) {
	const (
		thrift  = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
		sqlCLI  = "org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver"
		connect = "org.apache.spark.sql.connect.service.SparkConnectServer"
		repl    = "org.apache.spark.repl.Main"
	)
	tests := []struct {
		name    string
		args    []string
		primary string
		implied bool
		appArgs []string
		opts    []string // canonical option names, in order
	}{
		{name: "thriftserver hiveconf then options", args: []string{"--class", thrift, "--name", "Thrift JDBC/ODBC Server", "--hiveconf", "hive.server2.thrift.port=10001", "--master", "yarn", "--packages", "g:a:1"},
			primary: ResourceSparkInternal, implied: true, appArgs: []string{"--hiveconf", "hive.server2.thrift.port=10001"}, opts: []string{"--class", "--name", "--master", "--packages"}},
		{name: "spark-sql -e", args: []string{"--class", sqlCLI, "-e", "select 1", "--packages", "g:a:1"},
			primary: ResourceSparkInternal, implied: true, appArgs: []string{"-e", "select 1"}, opts: []string{"--class", "--packages"}},
		{name: "spark-shell -i", args: []string{"--class", repl, "--name", "Spark shell", "-i", "init.scala", "--conf=spark.jars.packages=g:a:1"},
			primary: ResourceSparkShell, implied: true, appArgs: []string{"-i", "init.scala"}, opts: []string{"--class", "--name", "--conf"}},
		{name: "connect server, no resource", args: []string{"--class", connect, "--name", "Spark Connect server", "--packages", "org.apache.spark:spark-connect_2.12:3.5.0"},
			primary: ResourceSparkInternal, implied: true, opts: []string{"--class", "--name", "--packages"}},
		{name: "explicit spark-internal token is an app arg", args: []string{"--class", sqlCLI, "spark-internal", "--verbose"},
			primary: ResourceSparkInternal, implied: true, appArgs: []string{"spark-internal"}, opts: []string{"--class", "--verbose"}},
		{name: "resource before --class: not mixed", args: []string{"--master", "local", "app.jar", "--class", repl},
			primary: "app.jar", appArgs: []string{"--class", repl}, opts: []string{"--master"}},
		{name: "ordinary class", args: []string{"--class", "com.example.Main", "app.jar", "--packages", "x"},
			primary: "app.jar", appArgs: []string{"--packages", "x"}, opts: []string{"--class"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseArgv(tt.args)
			if err != nil {
				t.Fatalf("ParseArgv(%q): %v", tt.args, err)
			}
			var opts []string
			for _, o := range a.Options {
				opts = append(opts, o.Name)
			}
			got := struct {
				Primary       string
				Has, Implied  bool
				AppArgs, Opts []string
			}{a.Primary, a.HasPrimary, a.ImpliedPrimary, a.AppArgs, opts}
			want := got
			want.Primary, want.Has, want.Implied, want.AppArgs, want.Opts = tt.primary, true, tt.implied, tt.appArgs, tt.opts
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ParseArgv(%q) (-want +got):\n%s", tt.args, diff)
			}
			if diff := cmp.Diff(tt.args, a.Tokens()); diff != "" {
				t.Errorf("Tokens() does not give the argv back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseArgvActions: SparkSubmitArguments.handle errors with "Action
// cannot be both …" when a second --kill/--status follows one; --help and
// --usage-error print the usage and exit where they are met, so they win.
func TestParseArgvActions(t *testing.T) {
	tests := []struct {
		args    []string
		action  string
		wantErr string
	}{
		{args: []string{"--kill", "a", "--master", "spark://m:7077"}, action: ActionKill},
		{args: []string{"--status", "a", "--master", "spark://m:7077"}, action: ActionStatus},
		{args: []string{"--kill", "a", "--status", "b"}, wantErr: "cannot be both"},
		{args: []string{"--status", "a", "--kill", "b"}, wantErr: "cannot be both"},
		{args: []string{"--kill", "a", "--kill", "b"}, wantErr: "cannot be both"},
		{args: []string{"--help", "--kill", "a"}, action: ActionHelp},
		{args: []string{"--kill", "a", "-h"}, action: ActionHelp},
		{args: []string{"--usage-error", "--status", "a"}, action: ActionUsageError},
	}
	for _, tt := range tests {
		a, err := ParseArgv(tt.args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseArgv(%q) = %v; want an error containing %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseArgv(%q): %v", tt.args, err)
			continue
		}
		if a.Action != tt.action {
			t.Errorf("ParseArgv(%q).Action = %q; want %q", tt.args, a.Action, tt.action)
		}
	}
}
