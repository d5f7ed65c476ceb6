package submit

import "testing"

func TestImageSparkVersion(t *testing.T) {
	for img, want := range map[string]string{
		"apache/spark:4.0.5-scala2.13-java17-python3-ubuntu": "4.0.5",
		"spark:3.5.0":                              "3.5.0",
		"docker.io/apache/spark:4.3.0":             "4.3.0",
		"registry.example/team/spark-custom:4.0.5": "",
		"apache/spark:latest":                      "",
		"":                                         "",
	} {
		if got := ImageSparkVersion(img); got != want {
			t.Errorf("ImageSparkVersion(%q) = %q, want %q", img, got, want)
		}
	}
}
