#!/bin/bash
# A Debian root per SLURM release, made with mmdebstrap from Debian's archive
# and cached under /var/tmp/gangway-roots/SUITE (not /tmp: the test cluster's
# nodes mount a private /tmp). Needs root.
#
#   contrib/dev/root.sh make SUITE          make the root if missing or stale; print its path
#   contrib/dev/root.sh path SUITE          the same (the root is made on first use)
#   contrib/dev/root.sh run SUITE [--] CMD  run CMD inside the root (made on first use)
#   contrib/dev/root.sh list                suites and the SLURM release each brings
#
#   suite     SLURM  PMIx  compiler  Catch2  PyTorch  Open MPI
#   bookworm  22.05  4     g++ 12    v2      1.13     4.1     the host itself: no root is made
#   trixie    24.11  5     g++ 14    v3      2.6      5.0
#   sid       26.05  7     g++ 16    v3      2.14     6.0 rc   +accelerate, +apptainer; SLURM without PMIx
#
# A root is made in a temporary directory beside its final place and renamed
# when complete, so a half-made root is never used; its stamp
# (.gangway-root-stamp) records the suite, mirror and package list, and a root
# whose stamp differs from this script's is made again, except when only
# packages were added to the list: then apt installs the added ones into the
# cached root (minutes fewer than a new root) and the stamp is rewritten; a
# root that has every package of the list and more (a newer checkout's list
# extended it) is used as it is, so that two checkouts do not make it again
# in turn. `run` enters a private
# mount namespace (unshare -m) that binds /proc, /sys, /dev and the source
# tree (at the same path) and the host's /usr/local/cuda (read-only) into the
# root, with a fresh /tmp, then chroots: the mounts never reach the host and
# vanish with the command, on error too. The command runs with a clean
# environment (PATH, HOME, LANG, TERM, and CI and MAKEFLAGS when set) in the
# current directory when it is inside the source tree.
# For bookworm, `path` prints / and `run` runs CMD here.
#
# Exit status: CMD's for run; 0 for the others; 75 when the root cannot be made
# because Debian's archive is unreachable or the suite is momentarily
# uninstallable (one line on stderr says which suite and what to do: not a
# gangway failure); 1 for anything else (usage, not root, disk, ...).
# GANGWAY_ROOTS=DIR moves the cache; GANGWAY_MIRROR=URL picks the mirror.
set -euo pipefail
prog=contrib/dev/root.sh
roots=${GANGWAY_ROOTS:-/var/tmp/gangway-roots}
mirror=${GANGWAY_MIRROR:-http://deb.debian.org/debian}
EX_ARCHIVE=75   # sysexits.h EX_TEMPFAIL: try again later

die() { echo "$prog: $*" >&2; exit 1; }

# --- the packages ------------------------------------------------------------
# What building gangway and its .deb needs (configure.ac, contrib/debian/control,
# contrib/dev/install-deps.sh), what the test cluster runs (tests/cluster/cluster.sh:
# ip, tc, nsenter, unshare, mount, flock, timeout, hostname, slurmctld, slurmd,
# slurmstepd, sinfo) and the clients the tests run. The same on every suite
# except where a suite lacks a package.
common=(
  # build
  build-essential g++ make autoconf automake libtool pkg-config binutils git
  libslurm-dev libhwloc-dev libpmix-dev libibverbs-dev rdma-core catch2 libssl-dev
  man-db groff-base debhelper dpkg-dev fakeroot python3
  # the fleet memory: its store, its reports' JSON, fleet serve's HTTP server
  libsqlite3-dev nlohmann-json3-dev libmicrohttpd-dev
  # the test cluster (slurmdbd for `cluster.sh up --accounting`: it must be the
  # release's own; the MariaDB server is the host's)
  slurmctld slurmd slurm-client slurmdbd iproute2 util-linux mount procps hostname mawk
  kmod hwloc iperf3
  # clients
  python3-torch openmpi-bin libopenmpi-dev python3-mpi4py
)
# sid adds Accelerate and Apptainer (tests/integration/apptainer.sh; its
# squashfs-tools builds the test's SIF image).
packages() {
  case $1 in
    trixie) echo "${common[*]}";;
    sid) echo "${common[*]} python3-accelerate apptainer squashfs-tools";;
  esac
}
release_of() {
  case $1 in
    bookworm) echo "SLURM 22.05 (the host: no root)";;
    trixie) echo "SLURM 24.11";;
    sid) echo "SLURM 26.05";;
    *) return 1;;
  esac
}
# sid's Release file carries a Valid-Until that this machine's clock finds past.
aptopts() { [ "$1" = sid ] && echo "Acquire::Check-Valid-Until \"false\"" || true; }
stamp_text() {
  printf 'suite=%s\nmirror=%s\nvariant=apt\naptopt=%s\npackages=%s\n' \
    "$1" "$mirror" "$(aptopts "$1")" "$(packages "$1" | tr ' ' '\n' | sort | tr '\n' ' ')"
}
check_suite() {
  release_of "$1" >/dev/null || die "unknown suite '$1': one of bookworm (host), trixie, sid"
}

# --- making a root -----------------------------------------------------------
# The archive is the cause when apt could not fetch, or could not resolve the
# suite's dependencies as published now: say so in one line, exit 75.
archive_cause() {  # suite log
  local s=$1 log=$2 what
  if grep -qE 'Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Connection (timed out|refused|failed)|Network is unreachable|No route to host|Hash Sum mismatch|File has unexpected size|Release file .* is not valid yet|is expired|The repository .* (does not have|is not signed)|NO_PUBKEY|Failed to download' "$log"; then
    what="Debian's archive ($mirror) could not be reached or served $s's indexes/packages"
  elif grep -qE 'Unable to locate package|has no installation candidate|unmet dependencies|but it is not (going to be )?installable|held broken packages|Unable to correct problems' "$log"; then
    what="$s is momentarily uninstallable in Debian's archive: $(grep -m1 -E 'Unable to locate package|has no installation candidate|Depends: .*(not installable|not going to be installed)' "$log" | sed 's/^ *//' | tr -s ' ')"
  else
    return 1
  fi
  echo "$prog: cannot make the $s root: $what; this is the archive, not gangway: retry later (or set GANGWAY_MIRROR to another mirror); full log: $log" >&2
  return 0
}

# The cached root's stamp differs from want only by packages added to the
# list: print the added ones (nothing printed: the root must be made again).
added_packages() {  # old_stamp want
  local old_pkgs new_pkgs p added=()
  [ "$(grep -v '^packages=' <<<"$1")" = "$(grep -v '^packages=' <<<"$2")" ] || return 0
  old_pkgs=" $(sed -n 's/^packages=//p' <<<"$1") "
  new_pkgs=" $(sed -n 's/^packages=//p' <<<"$2") "
  for p in $old_pkgs; do [[ $new_pkgs == *" $p "* ]] || return 0; done
  for p in $new_pkgs; do [[ $old_pkgs == *" $p "* ]] || added+=("$p"); done
  echo "${added[*]}"
}

# apt-get installs the added packages into the cached root, in a private mount
# namespace (as mmdebstrap does: no mount reaches the host). The root's own
# apt configuration (mmdebstrap's sources.list and options) applies.
add_packages() {  # suite dir log packages...
  local s=$1 dir=$2 log=$3; shift 3
  echo "$prog: adding $* to the $s root ($dir; log $log)" >&2
  unshare -m --propagation private -- /bin/sh -c '
    set -e
    r=$1; shift
    mount --make-rprivate /
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
    chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
      /bin/sh -c "apt-get update && apt-get install -y --no-install-recommends \"\$@\" && apt-get clean && rm -rf /var/lib/apt/lists/*" sh "$@"
  ' sh "$dir" "$@" >"$log" 2>&1
}

# The cached root's stamp differs from want only by packages that want lacks:
# the root has all that is wanted.
has_all_packages() {  # old_stamp want
  local old_pkgs want_pkgs p
  [ "$(grep -v '^packages=' <<<"$1")" = "$(grep -v '^packages=' <<<"$2")" ] || return 1
  old_pkgs=" $(sed -n 's/^packages=//p' <<<"$1") "
  want_pkgs=$(sed -n 's/^packages=//p' <<<"$2")
  for p in $want_pkgs; do [[ $old_pkgs == *" $p "* ]] || return 1; done
}

make_root() {  # suite
  local s=$1 dir=$roots/$1 want tmp log old
  [ "$(id -u)" = 0 ] || die "making the $s root needs root (mmdebstrap, chroot)"
  command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: apt-get install mmdebstrap (contrib/dev/install-deps.sh)"
  mkdir -p "$roots"
  want=$(stamp_text "$s")
  # One maker per suite at a time; a second waits, then finds the root made.
  exec 9>"$roots/.$s.lock"
  flock 9
  if [ -f "$dir/.gangway-root-stamp" ] && [ "$(cat "$dir/.gangway-root-stamp")" = "$want" ]; then
    exec 9>&-; return 0
  fi
  if [ -f "$dir/.gangway-root-stamp" ] && has_all_packages "$(cat "$dir/.gangway-root-stamp")" "$want"; then
    exec 9>&-; return 0
  fi
  if [ -f "$dir/.gangway-root-stamp" ]; then
    local added; added=$(added_packages "$(cat "$dir/.gangway-root-stamp")" "$want")
    if [ -n "$added" ]; then
      log=$roots/$s.log
      # shellcheck disable=SC2086 # a list of package names
      if add_packages "$s" "$dir" "$log" $added; then
        printf '%s\n' "$want" >"$dir/.gangway-root-stamp.new" && mv "$dir/.gangway-root-stamp.new" "$dir/.gangway-root-stamp"
        echo "$prog: added $added to the $s root" >&2
        exec 9>&-; return 0
      fi
      archive_cause "$s" "$log" && exit $EX_ARCHIVE
      echo "$prog: apt could not add $added to the $s root (log $log): making it again" >&2
    fi
  fi
  [ -e "$dir" ] && echo "$prog: the $s root's package list changed: making it again" >&2
  # What an interrupted maker left (we hold the lock: no maker runs now).
  for old in "$roots/.$s".new.* "$roots/.$s".old.*; do
    [ -d "$old" ] || continue
    grep -q " $old[/ ]" /proc/self/mountinfo || rm -rf --one-file-system "$old"
  done
  tmp=$(mktemp -d "$roots/.$s.new.XXXXXX")
  log=$roots/$s.log
  local opt=() ; [ -n "$(aptopts "$s")" ] && opt=(--aptopt="$(aptopts "$s")")
  echo "$prog: making the $s root in $dir ($(release_of "$s"); mmdebstrap, a few minutes; log $log)" >&2
  local t0=$SECONDS
  # mmdebstrap mounts /proc, /sys and /dev into the new root: in a private
  # mount namespace, so that an interrupted run leaves no mount on the host.
  if ! unshare -m --propagation private -- mmdebstrap --variant=apt --mode=root --format=directory "${opt[@]}" \
        --include="$(packages "$s" | tr ' ' ',')" \
        "$s" "$tmp" "$mirror" >"$log" 2>&1; then
    rm -rf --one-file-system "$tmp"
    archive_cause "$s" "$log" && exit $EX_ARCHIVE
    tail -20 "$log" >&2
    die "mmdebstrap failed making the $s root (log above, in full in $log)"
  fi
  printf '%s\n' "$want" >"$tmp/.gangway-root-stamp"
  if [ -e "$dir" ]; then
    # Never delete through a mount: a root in use by the test cluster keeps its mounts.
    grep -q " $dir[/ ]" /proc/self/mountinfo && { rm -rf --one-file-system "$tmp"; die "$dir is stale but has mounts (in use?): unmount them, then run again"; }
    old=$(mktemp -d "$roots/.$s.old.XXXXXX")
    mv "$dir" "$old/root"
    mv "$tmp" "$dir"
    rm -rf --one-file-system "$old"
  else
    mv "$tmp" "$dir"
  fi
  echo "$prog: made the $s root in $((SECONDS - t0)) s: $dir" >&2
  exec 9>&-
}

root_of() {  # suite: make if needed, print the path
  check_suite "$1"
  [ "$1" = bookworm ] && { echo /; return; }
  make_root "$1"
  echo "$roots/$1"
}

# --- running in a root ---------------------------------------------------------
# The source tree: this script's checkout (and its git directory when it lies
# elsewhere, as a worktree's does, so git works inside).
top=$(cd "$(dirname "$0")/../.." && pwd -P)
binds() {
  echo "$top"
  local common
  common=$(git -C "$top" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || return 0
  case $common in "$top"/*) ;; *) echo "$common";; esac
}

inner() {  # root cwd cmd...  (in the private mount namespace)
  local r=$1 cwd=$2 b; shift 2
  mount --make-rprivate /
  mount -t proc proc "$r/proc"
  mount --rbind /sys "$r/sys"
  mount --rbind /dev "$r/dev"
  mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
  while read -r b; do
    mkdir -p "$r$b"
    mount --rbind "$b" "$r$b"
  done < <(binds)
  # The host's CUDA toolkit (read-only), so the unit test that assembles the
  # computation check's PTX runs in every release's build, as on the host.
  if [ -d /usr/local/cuda/bin ]; then
    local cuda; cuda=$(readlink -f /usr/local/cuda)
    mkdir -p "$r/usr/local/cuda"
    mount --rbind "$cuda" "$r/usr/local/cuda" && mount -o remount,bind,ro "$r/usr/local/cuda"
  fi
  local env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}")
  [ -n "${CI:-}" ] && env+=(CI="$CI")
  [ -n "${MAKEFLAGS:-}" ] && env+=(MAKEFLAGS="$MAKEFLAGS")
  exec chroot "$r" /usr/bin/env -i "${env[@]}" /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' sh "$cwd" "$@"
}

run_in() {  # suite cmd...
  local s=$1 r; shift
  [ $# -gt 0 ] || die "run $s: no command"
  r=$(root_of "$s")
  if [ "$s" = bookworm ]; then exec "$@"; fi
  # The current directory is visible inside only when it is in the source tree.
  local cwd; cwd=$(pwd -P)
  case $cwd in "$top"|"$top"/*) ;; *) cwd=/;; esac
  exec unshare -m --propagation private -- "$0" __inner "$r" "$cwd" "$@"
}

case ${1:-} in
  make|path) [ $# = 2 ] || die "usage: $prog $1 SUITE"; root_of "$2";;
  run) [ $# -ge 2 ] || die "usage: $prog run SUITE [--] CMD..."
       s=$2; shift 2; [ "${1:-}" = -- ] && shift; run_in "$s" "$@";;
  list) for s in bookworm trixie sid; do printf '%-9s %s\n' "$s" "$(release_of "$s")"; done;;
  __inner) shift; inner "$@";;
  *) die "usage: $prog make|path|run|list SUITE ... (see the comment at the top of $0)";;
esac
