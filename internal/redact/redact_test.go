package redact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://user:s3cret@nexus.example/repo/", "https://nexus.example/repo/"},
		{"https://nexus.example/repo/", "https://nexus.example/repo/"},
		{"https://b.s3.amazonaws.com/k.jar?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F&X-Amz-Signature=abc", "https://b.s3.amazonaws.com/k.jar?REDACTED"},
		{"https://example/a.jar?version=1", "https://example/a.jar?version=1"},
		{"file:///tmp/repo/", "file:///tmp/repo/"},
		{"not a url user:pw@host", "not a url user:pw@host"},
	} {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestString(t *testing.T) {
	in := `GET https://alice:pa55@repo.example/g/a.pom failed; presigned https://b.example/k?X-Amz-Signature=deadbeef&x=1 too`
	got := String(in)
	for _, secret := range []string{"pa55", "alice", "deadbeef"} {
		if strings.Contains(got, secret) {
			t.Errorf("String leaked %q: %s", secret, got)
		}
	}
	if !strings.Contains(got, "https://repo.example/g/a.pom") {
		t.Errorf("String lost the URL: %s", got)
	}
}

func TestConf(t *testing.T) {
	got := map[string]string{}
	for k, v := range map[string]string{
		"spark.kubernetes.authenticate.submission.oauthToken":     "eyJhbGciOi",
		"spark.kubernetes.authenticate.submission.oauthTokenFile": "/var/run/token",
		"spark.hadoop.fs.s3a.secret.key":                          "wJalr",
		"spark.executor.memory":                                   "4g",
		"spark.jars":                                              "https://u:p@h/x.jar",
	} {
		got[k] = Conf(k, v)
	}
	want := map[string]string{
		"spark.kubernetes.authenticate.submission.oauthToken":     mask,
		"spark.kubernetes.authenticate.submission.oauthTokenFile": "/var/run/token",
		"spark.hadoop.fs.s3a.secret.key":                          mask,
		"spark.executor.memory":                                   "4g",
		"spark.jars":                                              "https://h/x.jar",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Conf (-want +got):\n%s", d)
	}
}

func TestStripUserinfo(t *testing.T) {
	if got := StripUserinfo("https://u:p@h/r/?q=1"); got != "https://h/r/?q=1" {
		t.Errorf("StripUserinfo = %q", got)
	}
}

func TestLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"args: --conf spark.kubernetes.authenticate.submission.oauthToken=eyJhbGciOi --conf spark.executor.memory=4g",
			"args: --conf spark.kubernetes.authenticate.submission.oauthToken=xxxxx --conf spark.executor.memory=4g"},
		{"(spark.hadoop.fs.s3a.secret.key,wJalr)", "(spark.hadoop.fs.s3a.secret.key,wJalr)"}, // Spark redacts its own conf dumps
		{"spark.hadoop.fs.s3a.secret.key=wJalr, spark.authenticate.secret=abc", "spark.hadoop.fs.s3a.secret.key=xxxxx, spark.authenticate.secret=xxxxx"},
		{"--conf spark.kubernetes.authenticate.submission.oauthTokenFile=/var/run/token", "--conf spark.kubernetes.authenticate.submission.oauthTokenFile=/var/run/token"},
		{"Exception: https://user:pw@h.example/x?X-Amz-Signature=abc", "Exception: https://h.example/x?REDACTED"},
		{"INFO SparkContext: Running Spark version 3.5.0", "INFO SparkContext: Running Spark version 3.5.0"},
	} {
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
