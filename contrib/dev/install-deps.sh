#!/bin/bash
# Installs, from Debian 12's own archive, everything gangway needs to build,
# test, and run its local test cluster. Safe to run again.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "install-deps.sh: run as root (sudo $0): it installs Debian packages" >&2; exit 1; }
pkgs=(
  # build
  g++ make autoconf automake libtool pkg-config binutils
  libslurm-dev libhwloc-dev libpmix-dev libibverbs-dev rdma-core catch2 libssl-dev libsqlite3-dev nlohmann-json3-dev
  libmicrohttpd-dev
  # the local test cluster and the real clients the tests run
  slurmctld slurmd slurm-client iproute2 util-linux procps hwloc iperf3 python3-torch
  # the test cluster's accounting (tests/cluster/cluster.sh up --accounting, for
  # tests/integration/postmortem.sh): slurmdbd and the MariaDB server it keeps its tables in
  slurmdbd mariadb-server
  # a real Prometheus (and promtool) scraping gangway fleet serve (tests/fleet_prometheus.sh)
  prometheus
  # a long-term store behind it: Prometheus remote_writes to VictoriaMetrics' single-node server
  # (tests/fleet_remote_write.sh); the package's service is not used, the test starts its own
  victoria-metrics
  # a dead path between two test nodes (tests/integration/lib.sh cut_pair)
  nftables
  # an MPI program (Open MPI) under srun --mpi=pmix after the check
  python3-mpi4py
  # the fuzz targets (tests/fuzz/run.sh): clang with libFuzzer and the sanitizers' runtimes
  clang libclang-rt-dev
  # man pages are checked for warnings
  man-db groff-base
  # the heatmap rendered as a viewer shows it (tests/heatmap_render.sh)
  librsvg2-bin fonts-dejavu-core python3-pil
  # the Debian package (contrib/dev/build-deb.sh) and the doctor test's ELF patching
  debhelper dpkg-dev fakeroot python3
  # the Debian roots of the other SLURM releases (contrib/dev/root.sh)
  mmdebstrap
)
missing=()
for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
