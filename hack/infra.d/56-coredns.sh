# CoreDNS v1.15.0, the cluster DNS of the tests' real node (issue 25):
# internal/testenv/cluster runs it on the node's address with the kubernetes
# plugin, so that pods resolve Services (the driver's headless Service for the
# executors) as they do on a real cluster. Built from the Go module proxy
# through its own nested module .ci/coredns (only the plugins the node needs:
# see main.go there; its own go.sum, so CoreDNS's modules never change the
# hash, and so the cache, of the Kubernetes builds), installed into
# $PREBAKE_CI_CACHE/coredns-v1.15.0-<go.sum hash>/ (symlink coredns-current).
dns_mod="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.ci/coredns" && pwd)"
dns_dir="$PREBAKE_CI_CACHE/coredns-v1.15.0-$(sha256sum "$dns_mod/go.sum" | cut -c1-12)"
if [ -x "$dns_dir/coredns" ]; then
  log "coredns: $dns_dir is up to date"
else
  log "coredns: building CoreDNS v1.15.0"
  mkdir -p "$dns_dir"
  (cd "$dns_mod" && nice go build -trimpath -ldflags "-s -w" -o "$dns_dir/coredns.tmp" .)
  mv "$dns_dir/coredns.tmp" "$dns_dir/coredns"
fi
ln -sfn "$dns_dir" "$PREBAKE_CI_CACHE/coredns-current"
unset dns_mod dns_dir
