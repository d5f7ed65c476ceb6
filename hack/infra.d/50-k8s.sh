# Kubernetes test servers and the real node, v1.37.2, built in ONE go build
# from the Go module proxy through the nested wrapper module .ci/k8s (see
# ../shared/docs/test-infra.md §3 and "A real node"): kube-apiserver, etcd
# 3.7.0 (./cmd/etcd), kube-controller-manager (the real Job controller of the
# warm-up test), and the node's kubelet, kube-scheduler and kube-proxy. They
# share most packages, so one build compiles each package once and keeps both
# cores busy. Installed into $PREBAKE_CI_CACHE/k8s-v1.37.2-<go.sum hash>/
# (symlink k8s-current), rebuilt only when a binary is missing there.
# Tests find them through k8s-current or $KUBEBUILDER_ASSETS (the apiserver
# tests: kube-apiserver and etcd).
k8s_version=v1.37.2
k8s_mod="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.ci/k8s" && pwd)"
k8s_dir="$PREBAKE_CI_CACHE/k8s-$k8s_version-$(sha256sum "$k8s_mod/go.sum" | cut -c1-12)"
k8s_bins="kube-apiserver kube-controller-manager kubelet kube-scheduler kube-proxy etcd"
k8s_missing=""
for b in $k8s_bins; do
  if [ ! -x "$k8s_dir/$b" ]; then k8s_missing="$k8s_missing $b"; fi
done
if [ -z "$k8s_missing" ]; then
  log "k8s: $k8s_dir is up to date"
else
  log "k8s: building$k8s_missing $k8s_version in one go build (about 30 min cold on 2 cores)"
  k8s_ldf="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version"
  k8s_ldf="$k8s_ldf -X k8s.io/component-base/version.gitMajor=1"
  k8s_ldf="$k8s_ldf -X k8s.io/component-base/version.gitMinor=37"
  k8s_ldf="$k8s_ldf -X k8s.io/component-base/version.gitTreeState=clean"
  rm -rf "$k8s_dir.tmp"
  mkdir -p "$k8s_dir.tmp"
  k8s_start=$(date +%s)
  (cd "$k8s_mod" && go build -ldflags "$k8s_ldf" -o "$k8s_dir.tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy \
    ./cmd/etcd)
  log "k8s: built in $(($(date +%s) - k8s_start)) s"
  rm -rf "$k8s_dir"
  mv "$k8s_dir.tmp" "$k8s_dir"
fi
ln -sfn "$k8s_dir" "$PREBAKE_CI_CACHE/k8s-current"
unset k8s_version k8s_mod k8s_dir k8s_bins k8s_missing k8s_ldf k8s_start b
