package cluster

import (
	"context"
	be "encoding/binary"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// dnsServer answers the pods' A queries for Services
// (NAME.NAMESPACE.svc.cluster.local: the cluster IP, or the ready endpoint
// addresses of a headless Service) from the API server, on NodeIP:53 (the
// kubelet's clusterDNS). Every other name is NXDOMAIN: nothing outside the
// node is reachable. It stands in for CoreDNS.
type dnsServer struct {
	conn   *net.UDPConn
	client kubernetes.Interface
}

func startDNS(client kubernetes.Interface) (*dnsServer, error) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(NodeIP), Port: 53})
	if err != nil {
		return nil, err
	}
	s := &dnsServer{conn: conn, client: client}
	go s.serve()
	return s, nil
}

func (s *dnsServer) close() { _ = s.conn.Close() }

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, addr, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if resp := s.answer(buf[:n]); resp != nil {
			_, _ = s.conn.WriteToUDP(resp, addr)
		}
	}
}

// answer builds the response to one query, or nil for a malformed one.
func (s *dnsServer) answer(q []byte) []byte {
	name, qtype, end, ok := parseQuestion(q)
	if !ok {
		return nil
	}
	ips, found := s.lookup(name)
	resp := make([]byte, 0, 512)
	resp = append(resp, q[0], q[1]) // id
	flags := uint16(0x8180)         // response, recursion desired and available
	if !found {
		flags |= 3 // NXDOMAIN
	}
	if qtype != 1 {
		ips = nil
	}
	resp = be.BigEndian.AppendUint16(resp, flags)
	resp = be.BigEndian.AppendUint16(resp, 1)
	resp = be.BigEndian.AppendUint16(resp, uint16(len(ips)))
	resp = append(resp, 0, 0, 0, 0)
	resp = append(resp, q[12:end]...)
	for _, ip := range ips {
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4)
		resp = append(resp, ip...)
	}
	return resp
}

// parseQuestion reads the first question: its name (lower case, no final
// dot), type, and the offset after it.
func parseQuestion(q []byte) (name string, qtype uint16, end int, ok bool) {
	if len(q) < 12 || be.BigEndian.Uint16(q[4:6]) == 0 {
		return "", 0, 0, false
	}
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return "", 0, 0, false
		}
		l := int(q[i])
		if l == 0 {
			i++
			break
		}
		if l&0xc0 != 0 || i+1+l > len(q) {
			return "", 0, 0, false
		}
		labels = append(labels, strings.ToLower(string(q[i+1:i+1+l])))
		i += 1 + l
	}
	if i+4 > len(q) {
		return "", 0, 0, false
	}
	return strings.Join(labels, "."), be.BigEndian.Uint16(q[i : i+2]), i + 4, true
}

// lookup resolves NAME.NAMESPACE.svc.cluster.local.
func (s *dnsServer) lookup(name string) ([]net.IP, bool) {
	rest, ok := strings.CutSuffix(name, ".svc.cluster.local")
	if !ok {
		return nil, false
	}
	svcName, ns, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(ns, ".") {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	svc, err := s.client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		if ip := net.ParseIP(svc.Spec.ClusterIP).To4(); ip != nil {
			return []net.IP{ip}, true
		}
		return nil, true
	}
	slices, err := s.client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svcName})
	if err != nil {
		return nil, true
	}
	var ips []net.IP
	for _, sl := range slices.Items {
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				if ip := net.ParseIP(a).To4(); ip != nil {
					ips = append(ips, ip)
				}
			}
		}
	}
	return ips, true
}
