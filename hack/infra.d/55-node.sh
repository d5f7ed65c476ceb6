# A real Kubernetes node for the integration tests (issue 25; see
# ../shared/docs/test-infra.md, "A real node"): kubelet, kube-scheduler and
# kube-proxy v1.37.2 (the API server's version), built in ONE go build from the
# wrapper module .ci/k8s with its third module file, node.mod (go.mod plus what
# the node needs: `go get -modfile=node.mod k8s.io/kubernetes/cmd/kubelet@v1.37.2
# …/cmd/kube-scheduler@v1.37.2 …/cmd/kube-proxy@v1.37.2`), installed into
# $PREBAKE_CI_CACHE/node-v1.37.2-<node.sum hash>/ (symlink node-current), and
# Debian's containerd 1.6, runc 1.1, CNI plugins, iptables, busybox-static (the
# test image's one binary) and mmdebstrap (the Spark base image's rootfs), which
# 10-apt.sh installs with the other Debian packages.
# Measured on this 2-core machine kind: apt 38 s; the go build 49 min wall
# (606 s user + 110 s sys, max RSS 2.1 GB) with an empty build cache, niced and
# run while 50-k8s.sh built kube-apiserver cold and other tests ran (load ~25);
# alone after 50-k8s.sh (most packages shared) it should be far less (not measured).
# kube-controller-manager's build that followed took ~10 min (its packages
# mostly built here). Binaries: kubelet 92 MB, kube-scheduler 81 MB,
# kube-proxy 79 MB. The pause and test images are built by
# internal/testenv/cluster, the Spark images by 65-spark-image.sh.
node_version=v1.37.2
node_mod="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.ci/k8s" && pwd)"
node_dir="$PREBAKE_CI_CACHE/node-$node_version-$(sha256sum "$node_mod/node.sum" | cut -c1-12)"
if [ -x "$node_dir/kubelet" ] && [ -x "$node_dir/kube-scheduler" ] && [ -x "$node_dir/kube-proxy" ]; then
  log "node: $node_dir is up to date"
else
  log "node: building kubelet, kube-scheduler, kube-proxy $node_version in one go build"
  node_ldf="-s -w -X k8s.io/component-base/version.gitVersion=$node_version"
  node_ldf="$node_ldf -X k8s.io/component-base/version.gitMajor=1"
  node_ldf="$node_ldf -X k8s.io/component-base/version.gitMinor=37"
  node_ldf="$node_ldf -X k8s.io/component-base/version.gitTreeState=clean"
  rm -rf "$node_dir.tmp"
  mkdir -p "$node_dir.tmp"
  (cd "$node_mod" && nice go build -modfile=node.mod -ldflags "$node_ldf" -o "$node_dir.tmp/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy)
  rm -rf "$node_dir"
  mv "$node_dir.tmp" "$node_dir"
fi
ln -sfn "$node_dir" "$PREBAKE_CI_CACHE/node-current"
unset node_apt node_missing node_version node_mod node_dir node_ldf

# The Spark base image's root file system (the Spark images of
# internal/testenv/cluster add pyspark's distribution to it): Debian's JRE 17
# and tini, user spark (185) owning /opt/spark/work-dir, made by mmdebstrap
# from this machine's own apt sources (no mirror is named here), cached as a
# tarball keyed on the package list: 2 min 49 s under load, 398 MB.
node_suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
node_rootfs_pkgs="openjdk-17-jre-headless,tini,procps,passwd"
node_rootfs_hook='chroot "$1" sh -ec "groupadd --system --gid 185 spark; useradd --system --uid 185 --gid 185 --home-dir /opt/spark --shell /bin/false spark; mkdir -p /opt/spark/work-dir; chown 185:185 /opt/spark/work-dir; chmod 0775 /opt/spark/work-dir"'
node_rootfs="$PREBAKE_CI_CACHE/spark-rootfs-$node_suite-$(printf '%s\n%s\n' "$node_rootfs_pkgs" "$node_rootfs_hook" | sha256sum | cut -c1-12).tar"
if [ -s "$node_rootfs" ]; then
  log "node: $node_rootfs is up to date"
else
  node_sources=""
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    if [ -s "$f" ]; then node_sources="$node_sources $f"; fi
  done
  log "node: mmdebstrap $node_suite with $node_rootfs_pkgs"
  # shellcheck disable=SC2086
  $SUDO mmdebstrap --quiet --mode=root --variant=apt --include="$node_rootfs_pkgs" \
    --aptopt='APT::Install-Recommends "false"' --customize-hook="$node_rootfs_hook" \
    "$node_suite" "${node_rootfs%.tar}.tmp.tar" $node_sources
  mv "${node_rootfs%.tar}.tmp.tar" "$node_rootfs"
fi
ln -sfn "$node_rootfs" "$PREBAKE_CI_CACHE/spark-rootfs-current.tar"
unset node_suite node_rootfs_pkgs node_rootfs_hook node_rootfs node_sources
