package native

import "testing"

// TestHTTPURIsNoGlob: spark-submit passes http:, https: and ftp: URIs as
// they are (no glob expansion), so a presigned store URL's query string
// (?X-Amz-…) is accepted; a glob in an s3a:// URI is still refused.
func TestHTTPURIsNoGlob(t *testing.T) {
	base := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster",
		"--conf", "spark.kubernetes.container.image=img"}
	for _, u := range []string{
		"https://s3.example/b/jars/a.jar?X-Amz-Signature=ab&X-Amz-Expires=3600",
		"HTTP://h/a.jar?x=1",
		"ftp://h/[a].jar",
	} {
		args := append(append([]string{}, base...), "--jars", u, "--archives", u+"#pydeps", "local:///a.py")
		if err := buildArgv(args, "3.5.9", nil); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if err := buildArgv(append(append([]string{}, base...), "--jars", "s3a://b/a?.jar", "local:///a.py"), "3.5.9", nil); err == nil {
		t.Errorf("s3a:// glob accepted")
	}
}
