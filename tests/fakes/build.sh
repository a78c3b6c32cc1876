#!/bin/sh
# Builds the GPU test doubles: OUTDIR/libcuda.so.1 (fake_cuda.c),
# OUTDIR/libnccl.so.2 (fake_nccl.c) and OUTDIR/libnvidia-ml.so.1 (fake_nvml.c,
# for gangway node-check), so the real gangway binary runs its cuda and nccl
# stages on machines without GPUs:
#   LD_LIBRARY_PATH=OUTDIR GANGWAY_FAKE_GPUS=2 GANGWAY_NCCL_LIB=OUTDIR/libnccl.so.2 gangway gpu-check --local
# and the RDMA test double OUTDIR/libibverbs.so.1 (fake_verbs.c: RC queue pairs
# doing RDMA WRITE over TCP), for gangway's RDMA write test:
#   LD_LIBRARY_PATH=OUTDIR GANGWAY_FAKE_IB_DEVICES=mlx5_0 GANGWAY_FAKE_IB_GBPS=8 gangway ...
# fake_verbs.c needs rdma-core's <infiniband/verbs.h> (libibverbs-dev); where
# the compiler lacks it, libibverbs.so.1 is skipped with a note on stderr (a
# gangway built there has no RDMA data path to test anyway).
# With --selftest, also builds and runs selftest.c against the fake NCCL, and
# selftest_verbs.c against the fake libibverbs.
# Quiet on success; on failure prints the compiler's (or selftest's) output and exits 1.
#
# usage: tests/fakes/build.sh OUTDIR [--selftest]   (CC picks the compiler)
set -eu

out= selftest=
for a in "$@"; do
    case $a in
        --selftest) selftest=1 ;;
        -*) echo "usage: $0 OUTDIR [--selftest]" >&2; exit 2 ;;
        *) out=$a ;;
    esac
done
[ -n "$out" ] || { echo "usage: $0 OUTDIR [--selftest]" >&2; exit 2; }
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cc=${CC:-cc}

# run CMD...: runs it silently; on failure shows its output and stops.
run() {
    if ! log=$("$@" 2>&1); then
        printf '%s\n' "$log" >&2
        exit 1
    fi
}

# Built under a temporary name, then renamed: a test already running never
# loads a half-written library.
lib() {
    run $cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -pthread -Wl,-soname,"$2" -o "$out/.$2.$$" "$src/$1"
    mv -f "$out/.$2.$$" "$out/$2"
}
lib fake_cuda.c libcuda.so.1
lib fake_nccl.c libnccl.so.2
lib fake_nvml.c libnvidia-ml.so.1
verbs=
if printf '#include <infiniband/verbs.h>\n' | $cc -E -x c - >/dev/null 2>&1; then
    lib fake_verbs.c libibverbs.so.1
    verbs=1
else
    echo "$0: no <infiniband/verbs.h> (libibverbs-dev): libibverbs.so.1 not built" >&2
fi

if [ -n "$selftest" ]; then
    run $cc -std=c11 -O2 -Wall -Wextra -Werror -pthread -o "$out/fake_selftest" "$src/selftest.c" \
        "$out/libnccl.so.2" -Wl,-rpath,"$out"
    "$out/fake_selftest"
    if [ -n "$verbs" ]; then
        run $cc -std=c11 -O2 -Wall -Wextra -Werror -pthread -o "$out/fake_selftest_verbs" "$src/selftest_verbs.c" \
            "$out/libibverbs.so.1" -Wl,-rpath,"$out"
        "$out/fake_selftest_verbs"
    fi
fi
