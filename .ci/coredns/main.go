// Command coredns is CoreDNS v1.15.0 with only the plugins the tests' single
// node needs (kubernetes, errors, log, cache, health, ready, loop, reload
// left out): the cluster DNS of internal/testenv/cluster, built by
// hack/infra.d/56-coredns.sh. It is a nested module so that the root
// module's go test ./... never enters it, and so that CoreDNS's modules do
// not change the hash of the Kubernetes builds in ../k8s.
package main

import (
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/template"

	_ "github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
