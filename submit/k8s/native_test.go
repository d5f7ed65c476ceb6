package k8s

import "testing"

func TestImageSparkVersion(t *testing.T) {
	for img, want := range map[string]string{
		"apache/spark:3.5.9": "3.5.9",
		"docker.io/apache/spark:4.0.5-scala2.13-java17-python3-ubuntu": "4.0.5",
		"spark:3.5.1-java17":                         "3.5.1",
		"registry.example.com/team/spark-jobs:3.5.9": "",
		"apache/spark:latest":                        "",
		"apache/spark-py:v3.4.0":                     "",
		"":                                           "",
	} {
		if got := imageSparkVersion(map[string]string{"spark.kubernetes.container.image": img}); got != want {
			t.Errorf("%q: %q, want %q", img, got, want)
		}
	}
	if got := imageSparkVersion(map[string]string{"spark.kubernetes.container.image": "x:1", "spark.kubernetes.driver.container.image": "apache/spark:4.0.5"}); got != "4.0.5" {
		t.Errorf("driver image first: %q", got)
	}
}
