package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// startDNS runs CoreDNS (hack/infra.d/56-coredns.sh) on NodeIP:53, the
// kubelet's clusterDNS, with the kubernetes plugin reading the API server
// as the admin: pods resolve Services (NAME.NAMESPACE.svc.cluster.local:
// the cluster IP, or the ready endpoints of a headless Service) and pods'
// reverse names as on a real cluster. Every other name is NXDOMAIN: nothing
// outside the node is reachable. It returns once CoreDNS's kubernetes
// plugin has synced (its ready endpoint) and it answers for the kubernetes
// Service.
func (c *Cluster) startDNS(ctx context.Context, bin string) error {
	ports, err := testenv.FreePorts(2)
	if err != nil {
		return err
	}
	corefile := fmt.Sprintf(`cluster.local:53 in-addr.arpa:53 {
	bind %[1]s
	errors
	health 127.0.0.1:%[2]d
	ready 127.0.0.1:%[3]d
	kubernetes cluster.local in-addr.arpa {
		kubeconfig %[4]s prebake
		pods insecure
		ttl 5
	}
	cache 5
}
.:53 {
	bind %[1]s
	errors
	template ANY ANY {
		rcode NXDOMAIN
	}
}
`, NodeIP, ports[0], ports[1], c.Kubeconfig)
	if err := os.WriteFile(c.path("Corefile"), []byte(corefile), 0o644); err != nil {
		return err
	}
	if _, err := c.start("coredns", bin, "-conf", c.path("Corefile")); err != nil {
		return err
	}
	ready := "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/ready"
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(NodeIP, "53"))
	}}
	return c.waitFor("CoreDNS ready and answering for the kubernetes Service", "coredns", 60*time.Second, func() bool {
		resp, err := http.Get(ready)
		if err != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false
		}
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		ips, err := r.LookupHost(qctx, "kubernetes.default.svc.cluster.local")
		return err == nil && len(ips) == 1 && ips[0] == kubernetesServiceIP
	})
}
