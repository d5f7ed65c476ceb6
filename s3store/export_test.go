package s3store

// WithSlowLimits is withSlowLimits, for the tests of package s3store_test.
var WithSlowLimits = withSlowLimits
