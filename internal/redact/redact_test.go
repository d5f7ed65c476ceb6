package redact

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

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
		{"(spark.hadoop.fs.s3a.secret.key,wJalr)", "(spark.hadoop.fs.s3a.secret.key,xxxxx)"}, // a conf dump Spark did not redact (audit 3 N11)
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

// The leaks of the security review (finding 7 and 10): passwords holding
// "/", "@" or a space, a mistyped --conf, server messages with a bearer
// token.
func TestSecretsInOutsideText(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		fn             func(string) string
	}{
		{"slash in the password, free text", `repository repo-1 "http://alice:pa/ss@127.0.0.1:18090/": bad`, `repository repo-1 "http://127.0.0.1:18090/": bad`, String},
		{"at in the password, free text", `GET http://bob:p@ss@127.0.0.1:18090/x.pom: 401`, `GET http://127.0.0.1:18090/x.pom: 401`, String},
		{"at in the password, list", `http://alice:s3cr3tPW@127.0.0.1:18090/,http://bob:p@ss@127.0.0.1:18090/`, `http://127.0.0.1:18090/,http://127.0.0.1:18090/`, String},
		{"slash and at in the password", `http://bob:p@ss/w@h.example/r/`, `http://h.example/r/`, String},
		{"base64 token with slashes", `https://ci:dG9r/ZW4+x/y=@nexus.example/repo/`, `https://nexus.example/repo/`, String},
		{"a port is not a password", `GET http://127.0.0.1:18090/org/x@1/a.pom`, `GET http://127.0.0.1:18090/org/x@1/a.pom`, String},
		{"user@host with a port and @ in the path", `http://u@h:8080/p@x`, `http://h:8080/p@x`, String},
		{"space in the password, one URL", `http://alice:pa ss@127.0.0.1:18090/`, `http://127.0.0.1:18090/`, URL},
		{"slash in the password, one URL", `http://alice:pa/ss@127.0.0.1:18090/`, `http://127.0.0.1:18090/`, URL},
		{"conf without =", `spark.kubernetes.authenticate.submission.oauthTokenK8STOKENsecret`, `spark.kubernetes.authenticate.submission.oauthTokenxxxxx`, ConfArg},
		{"conf without =, password", `spark.ssl.keyStorePasswordhunter2`, `spark.ssl.keyStorePasswordxxxxx`, ConfArg},
		{"conf with =", `spark.kubernetes.authenticate.submission.oauthToken=abc`, `spark.kubernetes.authenticate.submission.oauthToken=xxxxx`, ConfArg},
		{"conf without =, no secret", `spark.executor.memory4g`, `spark.executor.memory4g`, ConfArg},
		{"token file key kept", `spark.kubernetes.authenticate.submission.oauthTokenFile`, `spark.kubernetes.authenticate.submission.oauthTokenFile`, ConfArg},
		{"API server message with a bearer token", `listing driver pods in default: Unauthorized: token Bearer K8STOKENsecret`, `listing driver pods in default: Unauthorized: token Bearer xxxxx`, Line},
		{"basic credentials", `Authorization: Basic YWxpY2U6czNjcjN0`, `Authorization: Basic xxxxx`, Line},
		{"spark-submit output", `INFO Client: --conf spark.kubernetes.authenticate.submission.oauthToken=K8STOKENsecret --conf spark.hadoop.fs.s3a.secret.key=S3ASECRET`, `INFO Client: --conf spark.kubernetes.authenticate.submission.oauthToken=xxxxx --conf spark.hadoop.fs.s3a.secret.key=xxxxx`, Line},
		{"a plain sentence", `using basic authentication; bearer of the news`, `using basic authentication; bearer of the news`, Line},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fn(tt.in); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// LineWriter redacts streamed output line by line, whatever the chunking.
func TestLineWriter(t *testing.T) {
	in := "start\nspark.authenticate.secret=abc123 next\r\nGET http://u:p/w@h/x\nlast s3a.secret.key=zz"
	want := "start\nspark.authenticate.secret=xxxxx next\r\nGET http://h/x\nlast s3a.secret.key=xxxxx"
	for _, chunk := range []int{1, 3, 7, len(in)} {
		var b strings.Builder
		w := NewLineWriter(&b)
		for i := 0; i < len(in); i += chunk {
			w.Write([]byte(in[i:min(i+chunk, len(in))]))
		}
		w.Close()
		if d := cmp.Diff(want, b.String()); d != "" {
			t.Errorf("chunks of %d (-want +got):\n%s", chunk, d)
		}
	}
}

// TestAudit3Gaps is audit 3 N11: the forms the redaction missed, each as the
// audit saw it, and the text around them that must stay.
func TestAudit3Gaps(t *testing.T) {
	lineCases(t, []lineCase{
		{"401 retry line quoting the token", "Unauthorized: token Bearer K8STOKENsecret99; re-reading credentials from spark.kubernetes.authenticate.submission.oauthToken (value not shown) (attempt 1 of 3)",
			"Unauthorized: token Bearer xxxxx; re-reading credentials from spark.kubernetes.authenticate.submission.oauthToken (value not shown) (attempt 1 of 3)"},
		{"letters-only bearer token", "Unauthorized: token Bearer abcdefghijklmnopqrstuvwxyz", "Unauthorized: token Bearer xxxxx"},
		{"bearer in a sentence", "the server wants bearer authentication (Bearer required)", "the server wants bearer authentication (Bearer required)"},
		{"JSON", `{"password": "JSONSECRET2", "token":"JSONSECRET3", "user": "alice"}`, `{"password": "xxxxx", "token":"xxxxx", "user": "alice"}`},
		{"JSON, escaped quote", `{"clientSecret": "a\"b c"}`, `{"clientSecret": "xxxxx"}`},
		{"JSON token file path kept", `{"oauthTokenFile": "/var/run/token"}`, `{"oauthTokenFile": "/var/run/token"}`},
		{"YAML or log", "password: LOGSECRET4", "password: xxxxx"},
		{"log line", "INFO Main: db password: LOGSECRET4, user: alice", "INFO Main: db password: xxxxx, user: alice"},
		{"YAML token file kept", "tokenFile: /var/run/token", "tokenFile: /var/run/token"},
		{"Scala tuple", "(spark.hadoop.fs.s3a.secret.key,TUPLESECRET4)", "(spark.hadoop.fs.s3a.secret.key,xxxxx)"},
		{"Scala tuple, not a secret", "(spark.executor.memory,4g)", "(spark.executor.memory,4g)"},
		{"a sentence with a colon", "the API server refused the submission's credentials (kubeconfig /k context ctx) 4 times in a row: Unauthorized", "the API server refused the submission's credentials (kubeconfig /k context ctx) 4 times in a row: Unauthorized"},
	})
}

// TestAddSecret: a secret prebake was given is masked by value in any form
// of text, in String, URL and Line alike.
func TestAddSecret(t *testing.T) {
	AddSecret("  tokenvalueonlyletters\n")
	AddSecret("abc") // too short: would mask words
	AddSecret("tokenvalueonlyletters-and-more")
	for _, tt := range []struct {
		fn       func(string) string
		in, want string
	}{
		{Line, "Unauthorized: token tokenvalueonlyletters (expired)", "Unauthorized: token xxxxx (expired)"},
		{Line, "got tokenvalueonlyletters-and-more", "got xxxxx"},
		{String, "x-token=tokenvalueonlyletters", "x-token=xxxxx"},
		{URL, "https://h.example/p?t=tokenvalueonlyletters", "https://h.example/p?t=xxxxx"},
		{Line, "abc def", "abc def"},
	} {
		if got := tt.fn(tt.in); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	big := strings.Repeat("é", 3_000_000) // 6 MB
	got := Cut(big, MaxMessage)
	if len(got) > MaxMessage+40 || !strings.HasSuffix(got, "… (6000000 bytes)") || !utf8.ValidString(got) {
		t.Errorf("Cut: %d bytes, suffix %q", len(got), got[len(got)-20:])
	}
	if Cut("short", MaxMessage) != "short" {
		t.Error("Cut changed a short message")
	}
	err := CutError(fmt.Errorf("api error: %w: %s", io.EOF, big))
	if !errors.Is(err, io.EOF) || len(err.Error()) > 2048 {
		t.Errorf("CutError: Is EOF %v, %d bytes", errors.Is(err, io.EOF), len(err.Error()))
	}
}

// TestAddConfSecrets: a conf's secret values are registered, not the values
// of secret-named keys that are ordinary text.
func TestAddConfSecrets(t *testing.T) {
	AddConfSecrets(map[string]string{
		"spark.hadoop.fs.s3a.secret.key":                          "S3ASECRETVALUE1",
		"spark.kubernetes.driver.secrets.db-pass":                 "/mnt/secrets/db",
		"spark.kubernetes.executor.secretKeyRef.DB_PASS":          "db-pass:password",
		"spark.yarn.security.tokens.hive.enabled":                 "false",
		"spark.kubernetes.authenticate.submission.oauthTokenFile": "/var/run/token",
		"spark.ssl.keyStorePassword":                              "short",
		"spark.executor.memory":                                   "4g",
		"spark.network.crypto.saslFallbackTokenTimeout":           "1200000000",
	})
	in := "key S3ASECRETVALUE1 at /mnt/secrets/db from db-pass:password, false, /var/run/token, short, 1200000000"
	want := "key xxxxx at /mnt/secrets/db from db-pass:password, false, /var/run/token, short, 1200000000"
	if got := String(in); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestAudit4L5 is audit 4 L5: the credentials-file form with blanks around
// "=" is masked, and prebake's own sentences are not.
func TestAudit4L5(t *testing.T) {
	lineCases(t, []lineCase{
		{"credentials file", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRET2", "aws_secret_access_key = xxxxx"},
		{"credentials file, blank after only", "aws_secret_access_key= wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key= xxxxx"},
		{"credentials file, tab", "aws_session_token\t=\tFwoGZXIvYXdzEJr", "aws_session_token\t=\txxxxx"},
		{"credentials file, key id kept", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"},
		{"ini, not a secret", "region = eu-west-1", "region = eu-west-1"},
		{"prebake's prose: this", "cache /c is shared and the repositories carry credentials: this run would be served from it", "cache /c is shared and the repositories carry credentials: this run would be served from it"},
		{"prebake's prose: line", "malformed XML in /tmp/secret/aws-credentials: line 1: content is not allowed in prolog", "malformed XML in /tmp/secret/aws-credentials: line 1: content is not allowed in prolog"},
		{"a log's password still masked", "password: LOGSECRET4", "password: xxxxx"},
		{"a lower-case password still masked", "db password: hunter", "db password: xxxxx"},
	})
}

// TestMessage: a message from a driver, an operator or a server is
// redacted and bounded, marker included; a short one is kept whole.
func TestMessage(t *testing.T) {
	term := "boom password: LOGSECRET4 token Bearer GOOD-TOKEN-2 " + strings.Repeat("M", 50_000)
	op := "driver container failed with ExitCode: 7, Reason: Error; password: OPSECRET9 token Bearer OPBEARER9 " + strings.Repeat("Z", 200_000)
	grpc := strings.Repeat("é ", 3<<20/3) + " https://u:pw@h/x"
	for _, tt := range []struct {
		name, in, prefix, suffix string
	}{
		{"termination message", term, "boom password: xxxxx token Bearer xxxxx MMM", fmt.Sprintf("M… [%d bytes, cut to 4066]", len(term))},
		{"operator errorMessage", op, "driver container failed with ExitCode: 7, Reason: Error; password: xxxxx token Bearer xxxxx", "xxxxx… [200100 bytes, cut to 91]"}, // the run of Z is beyond what is read,
		{"3 MiB, multibyte", grpc, "é é é", fmt.Sprintf("é… [%d bytes, cut to 4064]", len(grpc))},
		{"lines redacted one by one", "a\nspark.authenticate.secret=abc123\nb\n\n", "a\nspark.authenticate.secret=xxxxx\nb", "b"},
		{"short", "Error: ImagePullBackOff", "Error: ImagePullBackOff", "ImagePullBackOff"},
		{"no blank in the first 64 KiB", strings.Repeat("Q", 100_000), "", "… [100000 bytes, cut to 0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Message(tt.in)
			if len(got) > MaxResultMessage || !utf8.ValidString(got) || !strings.HasPrefix(got, tt.prefix) || !strings.HasSuffix(got, tt.suffix) {
				t.Errorf("Message: %d bytes, %q … %q", len(got), got[:min(len(got), 120)], got[max(0, len(got)-60):])
			}
			for _, secret := range []string{"LOGSECRET4", "GOOD-TOKEN-2", "OPSECRET9", "OPBEARER9", "abc123", ":pw@"} {
				if strings.Contains(got, secret) {
					t.Errorf("Message leaked %q", secret)
				}
			}
		})
	}
	if got := MessageN("0123456789 abcdef", 10); got != "… [17 bytes, cut to 0]" {
		t.Errorf("MessageN(…, 10) = %q", got)
	}
}

func BenchmarkMessage3MiB(b *testing.B) {
	s := strings.Repeat("x", 3<<20)
	for b.Loop() {
		Message(s)
	}
}

type lineCase struct{ name, in, want string }

// lineCases checks Line on each case, as a subtest.
func lineCases(t *testing.T, cases []lineCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.want {
				t.Errorf("Line(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}
