package rewrite

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/submit"
)

// TestRewriteConnectServer: `rewrite` takes a start-connect-server.sh
// command line as it takes spark-submit's: --packages and --conf
// spark.jars.packages go, the resolved jars come in as --jars (and
// --py-files, as spark-submit does for spark-internal), the script token
// (with --wait) and the spark.connect.* confs keep their places.
func TestRewriteConnectServer(t *testing.T) {
	var environ []string
	jar := "/cache/retrieve/0123abcd/org.apache.spark_spark-avro_2.13-4.0.5.jar"
	tests := []struct {
		name      string
		args, out []string
	}{
		{name: "--packages",
			args: []string{"/opt/spark/sbin/start-connect-server.sh", "--wait", "--packages", "org.apache.spark:spark-avro_2.13:4.0.5", "--conf", "spark.connect.grpc.binding.port=15003"},
			out:  []string{"/opt/spark/sbin/start-connect-server.sh", "--wait", "--conf", "spark.connect.grpc.binding.port=15003", "--jars", jar, "--py-files", jar}},
		{name: "spark.jars.packages and the user's jars",
			args: []string{"start-connect-server.sh", "--jars", "/opt/mine.jar", "--conf", "spark.jars.packages=org.apache.spark:spark-avro_2.13:4.0.5", "--conf", "spark.connect.extensions.relation.classes=com.example.Rel"},
			out:  []string{"start-connect-server.sh", "--jars", "/opt/mine.jar," + jar, "--conf", "spark.connect.extensions.relation.classes=com.example.Rel", "--py-files", jar}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := applyArgsIn(context.Background(), environ, tt.args, WithJarSource(fakeRewriteJars("")), WithWorkDir(t.TempDir()))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tt.out, r.Args); diff != "" {
				t.Errorf("Apply(%q) (-want +got):\n%s", tt.args, diff)
			}
			if r.Primary != submit.ResourceSparkInternal || !r.Submission.Argv.IsConnectServer() {
				t.Errorf("primary %q, connect server %v", r.Primary, r.Submission.Argv.IsConnectServer())
			}
			if !r.Submission.Packages().Empty() {
				t.Errorf("the rewritten line still resolves: %+v", r.Submission.Packages())
			}
			checkRewriteResult(t, tt.args, r, environ)
		})
	}
}
