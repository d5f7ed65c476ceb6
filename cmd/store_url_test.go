package cmd

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/s3store/s3test"
	"github.com/prebake/prebake/submit"
)

// TestStoreURLs: a store without a scheme is an error (it used to become a
// local directory, silently), as are S3 flags with a file:// store; a
// cluster-mode rewrite onto file: URLs or an OCI layout warns with the fix.
func TestStoreURLs(t *testing.T) {
	root, tmp := isolatedCLI(t)
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	t.Chdir(tmp)
	pkg := "org.slf4j:slf4j-api:2.0.7"
	for _, tt := range []struct {
		args []string
		env  string
		msg  string
	}{
		{[]string{"bake", "s3", "--store", "jarsbucket/prebake", "--endpoint", "http://127.0.0.1:1", "--path-style", pkg}, "", `"jarsbucket/prebake": no scheme; want s3://jarsbucket/prebake`},
		{[]string{"bake", "s3", pkg}, "team-spark-jars/prebake", "no scheme"},
		{[]string{"warm", "--file", filepath.Join(root, "examples", "sets.yaml"), "--store", "bucket"}, "", "no scheme"},
		{[]string{"bake", "s3", "--store", "file://" + tmp + "/s", "--endpoint", "http://127.0.0.1:1", pkg}, "", "--endpoint and --path-style are for s3:// stores"},
		{[]string{"rewrite", "--store", "file://" + tmp + "/s", "--path-style", "--", "--master", "local", "x.jar"}, "", "--endpoint and --path-style are for s3:// stores"},
	} {
		t.Setenv("PREBAKE_STORE", tt.env)
		code, out, errs := runPrebake(context.Background(), append(tt.args, demo...)...)
		if code != exitcode.Usage || !strings.Contains(errs, tt.msg) || out != "" {
			t.Errorf("%v (PREBAKE_STORE=%q): exit %d, want 64 and %q\n%s", tt.args, tt.env, code, tt.msg, errs)
		}
	}
	t.Setenv("PREBAKE_STORE", "")
	store := "file://" + filepath.Join(tmp, "store")
	if code, _, errs := runPrebake(context.Background(), append([]string{"bake", "s3", "-q", "--store", store, pkg}, demo...)...); code != 0 {
		t.Fatalf("bake s3: exit %d\n%s", code, errs)
	}
	code, _, errs := runPrebake(context.Background(), append([]string{"rewrite", "--store", store}, append(demo, "--", "--master", "spark://m:7077", "--deploy-mode", "cluster",
		"--packages", pkg, "--class", "A", "https://x/app.jar")...)...)
	if code != 0 || !strings.Contains(errs, "cluster mode: the jars are file: URLs") || !strings.Contains(errs, "; give --store s3://bucket/prefix or --image-from REF\n") {
		t.Errorf("cluster rewrite onto a file:// store: exit %d, want a warning\n%s", code, errs)
	}
}

// TestRewriteS3ACompatibleConfIT: with --endpoint and --path-style, the
// rewrite adds the spark.hadoop.fs.s3a.* settings Spark needs to read the
// s3a:// URLs of that store (a user's own value is kept), on a real
// S3-compatible server; s3a:// names the same store as s3://.
func TestRewriteS3ACompatibleConfIT(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t, "s3a-conf")
	root, tmp := isolatedCLI(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	pkg := "org.slf4j:slf4j-api:2.0.7"
	s3flags := []string{"--store", "s3a://" + bucket + "/p", "--endpoint", srv.Endpoint, "--path-style"}
	if code, out, errs := runPrebake(context.Background(), append(append([]string{"bake", "s3"}, s3flags...), append(demo, pkg)...)...); code != 0 || !strings.HasPrefix(out, "s3a://"+bucket+"/p/jars/sha256/") {
		t.Fatalf("bake s3 on s3a://: exit %d\n%s\n%s", code, out, errs)
	}
	argv := []string{"--", "--master", "spark://m:7077", "--deploy-mode", "cluster", "--packages", pkg, "--class", "A", "https://x/app.jar"}
	code, out, errs := runPrebake(context.Background(), append(append(append([]string{"rewrite"}, s3flags...), demo...), argv...)...)
	if code != 0 || !strings.Contains(out, "spark.hadoop.fs.s3a.endpoint="+srv.Endpoint) || !strings.Contains(out, "spark.hadoop.fs.s3a.path.style.access=true") {
		t.Errorf("rewrite: exit %d, want the s3a endpoint and path style\n%s\n%s", code, out, errs)
	}
	mine := append(append([]string{}, argv[:3]...), append([]string{"--conf", "spark.hadoop.fs.s3a.endpoint=http://mine"}, argv[3:]...)...)
	code, out, errs = runPrebake(context.Background(), append(append(append([]string{"rewrite"}, s3flags...), demo...), mine...)...)
	if code != 0 || strings.Contains(out, "fs.s3a.endpoint="+srv.Endpoint) || !strings.Contains(out, "fs.s3a.endpoint=http://mine") {
		t.Errorf("rewrite with the user's endpoint: exit %d\n%s\n%s", code, out, errs)
	}
	// submit's prepare warns what s3a:// URLs need: the library's warning
	// (rewrite.WarnS3AURLs) with the CLI's way around it.
	f := &submitFlags{}
	fs := newSubmitFlagSet(f)
	if err := fs.Parse(append(append([]string{}, s3flags...), demo...)); err != nil {
		t.Fatal(err)
	}
	sub, err := submit.LoadSubmission(argv[1:], nil)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if _, err := prepare(context.Background(), &globals{}, f, pipeline.Prepare, sub, &stderr); err != nil {
		t.Fatalf("prepare: %v\n%s", err, stderr.String())
	}
	if want := "warning: " + pipeline.S3AWarning + "; --url-style presigned needs neither"; !strings.Contains(stderr.String(), want) {
		t.Errorf("prepare with an s3a store: want %q on stderr:\n%s", want, stderr.String())
	}
}
