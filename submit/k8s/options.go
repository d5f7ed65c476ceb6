package k8s

// IsSparkSubmitOption reports whether name ("--master") is a spark-submit
// option that takes a value.
func IsSparkSubmitOption(name string) bool { return sparkSubmitValueOpts[name] }
