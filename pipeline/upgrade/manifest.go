package upgrade

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// ManifestJob is a job's inputs read from a kubeflow spark-operator
// SparkApplication (or a ScheduledSparkApplication's template).
type ManifestJob struct {
	// Name is metadata.name.
	Name string
	// Packages are what the operator's spark-submit would resolve:
	// spec.deps.packages, .repositories and .excludePackages, else the
	// sparkConf keys spark.jars.packages, .repositories and .excludes,
	// and spark.jars.ivySettings (as the manifest rewrite reads
	// them).
	Packages submit.Packages
	// SparkVersion is spec.sparkVersion.
	SparkVersion string
	// Image is spec.image, the job's current Spark image.
	Image string
}

// ReadSparkApplication reads the one SparkApplication or
// ScheduledSparkApplication of a manifest (name names it in errors). A
// manifest with none, or with several, is errdefs.Invalid: a report is
// about one job.
func ReadSparkApplication(ctx context.Context, name string, data []byte) (*ManifestJob, error) {
	var found []submit.Packages
	capture := rewrite.JarSourceFunc(func(_ context.Context, p submit.Packages) (*rewrite.Jars, error) {
		found = append(found, p)
		return nil, nil
	})
	// The rewrite reads the packages exactly as it would rewrite them; its
	// output is dropped.
	if _, err := rewrite.Manifest(ctx, name, data, rewrite.WithJarSource(capture)); err != nil {
		return nil, err
	}
	type spec struct {
		SparkVersion string `yaml:"sparkVersion"`
		Image        string `yaml:"image"`
		Template     *struct {
			SparkVersion string `yaml:"sparkVersion"`
			Image        string `yaml:"image"`
		} `yaml:"template"`
	}
	var apps []ManifestJob
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
			Spec spec `yaml:"spec"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("manifest %s: %w", name, err))
		}
		if !strings.HasPrefix(doc.APIVersion, "sparkoperator.k8s.io/") {
			continue
		}
		j := ManifestJob{Name: doc.Metadata.Name, SparkVersion: doc.Spec.SparkVersion, Image: doc.Spec.Image}
		switch doc.Kind {
		case rewrite.KindSparkApplication:
		case rewrite.KindScheduledSparkApplication:
			if t := doc.Spec.Template; t != nil {
				j.SparkVersion, j.Image = t.SparkVersion, t.Image
			}
		default:
			continue
		}
		apps = append(apps, j)
	}
	switch {
	case len(apps) == 0 || len(found) == 0:
		return nil, errdefs.Errorf(errdefs.Invalid, "manifest %s: no SparkApplication (sparkoperator.k8s.io) in it", name)
	case len(apps) > 1 || len(found) > 1:
		var names []string
		for _, a := range apps {
			names = append(names, a.Name)
		}
		return nil, errdefs.Errorf(errdefs.Invalid, "manifest %s: %d SparkApplications (%s): a report is about one job, give a file with one", name, len(apps), strings.Join(names, ", "))
	}
	apps[0].Packages = found[0]
	return &apps[0], nil
}

// imageVersionRe is a Spark version at the start of an image tag:
// apache/spark:3.5.1, spark:3.5.1-scala2.12-java17-ubuntu.
var imageVersionRe = regexp.MustCompile(`^(\d+\.\d+\.\d+)(?:$|[-_])`)

// sparkVersionOf is the job's Spark version: spec.sparkVersion, else the
// version at the start of spec.image's tag ("" when neither says).
func (j *ManifestJob) sparkVersionOf() string {
	if v := strings.TrimSpace(j.SparkVersion); v != "" {
		return v
	}
	ref := j.Image
	if at := strings.IndexByte(ref, '@'); at >= 0 {
		ref = ref[:at]
	}
	colon := strings.LastIndexByte(ref, ':')
	if colon < 0 || strings.Contains(ref[colon:], "/") {
		return ""
	}
	if m := imageVersionRe.FindStringSubmatch(ref[colon+1:]); m != nil {
		return m[1]
	}
	return ""
}
