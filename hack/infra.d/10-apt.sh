# Debian packages: the Ivy oracle, nginx for HTTP Maven repositories, the CNCF
# distribution registry and htpasswd; jq and python3 for the examples (examples/ci, examples/airflow).
# The real node (55-node.sh): containerd, runc, CNI plugins, iptables, busybox-static, mmdebstrap.
apt_pkgs="ivy liboro-java nginx docker-registry apache2-utils jq python3"
apt_pkgs="$apt_pkgs containerd runc containernetworking-plugins iptables busybox-static mmdebstrap"
missing=""
for p in $apt_pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  log "apt-get install$missing"
  # Do not let package scripts start services (nginx, docker-registry): tests start their own.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
