package k8s

// use sets all of o at once: in-package tests build the unexported options
// directly (the test seams client and retryBackoff included); makeOptions
// then applies the defaults to what o leaves unset.
func use(o options) Option { return func(p *options) { *p = o } }
