# A real Kubernetes node for the integration tests (issue 25; see
# ../shared/docs/test-infra.md, "A real node"): kubelet, kube-scheduler and
# kube-proxy are built with the API server by 50-k8s.sh (one go build); this
# part makes the Spark base image's root file system. Debian's containerd 1.6,
# runc 1.1, CNI plugins, iptables, busybox-static (the test image's one
# binary) and mmdebstrap come from 10-apt.sh. The pause and test images are
# built by internal/testenv/cluster, the Spark images by 65-spark-image.sh.

# The Spark base image's root file system (the Spark images of
# internal/testenv/cluster add pyspark's distribution to it): Debian's JRE 17
# and tini, Debian's python3 (PySpark's driver and workers, as the official
# image's default tag has it; issue 44), user spark (185) owning
# /opt/spark/work-dir, made by mmdebstrap
# from this machine's own apt sources (no mirror is named here), cached as a
# tarball keyed on the package list: 2 min 49 s under load, 398 MB.
node_suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
node_rootfs_pkgs="openjdk-17-jre-headless,tini,procps,passwd,python3"
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
