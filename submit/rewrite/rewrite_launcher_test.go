package rewrite

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/submit"
)

// TestRewriteDriverClassPathLastWins: the launcher turns --driver-class-path
// into conf spark.driver.extraClassPath (SparkSubmitCommandBuilder.
// OptionParser.handle: DRIVER_CLASS_PATH -> conf.put(DRIVER_EXTRA_CLASSPATH);
// CONF -> conf.put(k, v)), so between the flag and --conf the last one in
// the argv wins; SparkSubmitArguments only ever sees the conf. The merged
// class path must keep the winner's entries.
func TestRewriteDriverClassPathLastWins(t *testing.T) {
	tests := []struct {
		args []string
		want string // the user's entries the merged value starts with
		drop string // the loser, gone
	}{
		{args: []string{"--driver-class-path", "/opt/a.jar", "--conf", "spark.driver.extraClassPath=/opt/b.jar"}, want: "/opt/b.jar:", drop: "/opt/a.jar"},
		{args: []string{"--conf", "spark.driver.extraClassPath=/opt/b.jar", "--driver-class-path=/opt/a.jar"}, want: "/opt/a.jar:", drop: "/opt/b.jar"},
	}
	for _, tt := range tests {
		args := append([]string{"--master", "k8s://https://10.0.0.1:6443", "--packages", "org.postgresql:postgresql:42.7.1"}, tt.args...)
		args = append(args, "--class", "com.example.Db", "db.jar")
		var environ []string
		r, err := applyArgsIn(context.Background(), environ, args, WithJarSource(fakeRewriteJars("image")), WithImage("reg/img:1"), WithWorkDir(t.TempDir()))
		if err != nil {
			t.Fatalf("Apply(%q): %v", args, err)
		}
		s, err := submit.LoadSubmission(r.Args, environ)
		if err != nil {
			t.Fatal(err)
		}
		cp, ok := s.FlagOrConf("--driver-class-path", "spark.driver.extraClassPath")
		if !ok || !strings.HasPrefix(cp, tt.want) || !strings.HasSuffix(cp, "org.postgresql_postgresql-42.7.1.jar") {
			t.Errorf("Apply(%q): driver class path %q; want %q first, then the resolved jar", args, cp, tt.want)
		}
		if slices.ContainsFunc(r.Args, func(a string) bool { return strings.Contains(a, tt.drop) }) {
			t.Errorf("Apply(%q) = %q: still sets the losing %s", args, r.Args, tt.drop)
		}
	}
}

// TestRewriteSpecialClassMixedArgs: after a special --class the launcher
// mixes app arguments with options (SparkSubmitCommandBuilder.OptionParser.
// handleUnknown with allowsMixedArguments). They keep their places; the
// primary resource (spark-internal) is implied and not written; spark-internal
// apps get the jars on the Python path too (SparkSubmit: isPython ||
// isInternal(primaryResource) -> pyFiles).
func TestRewriteSpecialClassMixedArgs(t *testing.T) {
	args := []string{"--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", "--name", "Thrift JDBC/ODBC Server",
		"--hiveconf", "hive.server2.thrift.port=10001", "--master", "yarn", "--packages", "org.postgresql:postgresql:42.7.1", "-e", "select 1"}
	var environ []string
	r, err := applyArgsIn(context.Background(), environ, args, WithJarSource(fakeRewriteJars("")), WithWorkDir(t.TempDir()))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	jar := "/cache/retrieve/0123abcd/org.postgresql_postgresql-42.7.1.jar"
	want := []string{"--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", "--name", "Thrift JDBC/ODBC Server",
		"--jars", jar, "--py-files", jar,
		"--hiveconf", "hive.server2.thrift.port=10001", "--master", "yarn", "-e", "select 1"}
	if diff := cmp.Diff(want, r.Args); diff != "" {
		t.Errorf("Apply(%q) (-want +got):\n%s", args, diff)
	}
	if !r.Python || r.Primary != submit.ResourceSparkInternal {
		t.Errorf("python %v primary %q; want true, spark-internal", r.Python, r.Primary)
	}
	checkRewriteResult(t, args, r, environ)
}
