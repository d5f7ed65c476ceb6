# Kubernetes test servers: kube-apiserver v1.37.2, kube-controller-manager
# v1.37.2 (the real Job controller of the warm-up test) and etcd 3.7.0, built
# from the Go module proxy through the nested wrapper module .ci/k8s (see
# ../shared/docs/test-infra.md §3). Installed into
# $PREBAKE_CI_CACHE/k8s-v1.37.2-<go.sum hash>/; each binary is built only when
# it is missing there. They are built one after the other (never in parallel
# on 2 cores). kube-controller-manager needs modules kube-apiserver does not:
# it is built with the wrapper's second module file, .ci/k8s/kcm.mod (go.mod
# plus those, `go get -modfile=kcm.mod k8s.io/kubernetes/cmd/kube-controller-manager`),
# and cached as kube-controller-manager-<kcm.sum hash>, so that go.sum, and the
# directory of kube-apiserver and etcd, keep their hash.
# Tests find them through $PREBAKE_CI_CACHE/k8s-current (a symlink) or
# $KUBEBUILDER_ASSETS.
k8s_version=v1.37.2
k8s_mod="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.ci/k8s" && pwd)"
k8s_hash="$(sha256sum "$k8s_mod/go.sum" | cut -c1-12)"
k8s_dir="$PREBAKE_CI_CACHE/k8s-$k8s_version-$k8s_hash"
k8s_kcm="kube-controller-manager-$(sha256sum "$k8s_mod/kcm.sum" | cut -c1-12)"
if [ -x "$k8s_dir/kube-apiserver" ] && [ -x "$k8s_dir/etcd" ] && [ -x "$k8s_dir/$k8s_kcm" ]; then
  log "k8s: $k8s_dir is up to date"
else
  mkdir -p "$k8s_dir"
  k8s_ldf="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version"
  k8s_ldf="$k8s_ldf -X k8s.io/component-base/version.gitMajor=1"
  k8s_ldf="$k8s_ldf -X k8s.io/component-base/version.gitMinor=37"
  k8s_ldf="$k8s_ldf -X k8s.io/component-base/version.gitTreeState=clean"
  if [ ! -x "$k8s_dir/kube-apiserver" ]; then
    log "k8s: building kube-apiserver $k8s_version (about 14 min cold)"
    (cd "$k8s_mod" && go build -ldflags "$k8s_ldf" -o "$k8s_dir/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
    mv "$k8s_dir/kube-apiserver.tmp" "$k8s_dir/kube-apiserver"
  fi
  if [ ! -x "$k8s_dir/$k8s_kcm" ]; then
    log "k8s: building kube-controller-manager $k8s_version (about 12 min cold)"
    (cd "$k8s_mod" && nice go build -modfile=kcm.mod -ldflags "$k8s_ldf" -o "$k8s_dir/$k8s_kcm.tmp" k8s.io/kubernetes/cmd/kube-controller-manager)
    mv "$k8s_dir/$k8s_kcm.tmp" "$k8s_dir/$k8s_kcm"
  fi
  if [ ! -x "$k8s_dir/etcd" ]; then
    log "k8s: building etcd 3.7.0"
    (cd "$k8s_mod" && go build -ldflags "-s -w" -o "$k8s_dir/etcd.tmp" ./cmd/etcd)
    mv "$k8s_dir/etcd.tmp" "$k8s_dir/etcd"
  fi
fi
ln -sfn "$k8s_kcm" "$k8s_dir/kube-controller-manager"
ln -sfn "$k8s_dir" "$PREBAKE_CI_CACHE/k8s-current"
unset k8s_version k8s_mod k8s_hash k8s_dir k8s_ldf k8s_kcm
