#!/bin/bash
# What SLURM loads into every srun, sbatch and slurmstepd carries only what
# the plugin runs: the environment contract, pinning and the topology reader.
# No preflight, GPU, RDMA, report, network, fleet or crypto code (that is the
# launcher's: libgangway_preflight, _health and _fleet), no PMIx, CUDA or verbs library; both
# binaries hardened (full RELRO, stack protector, _FORTIFY_SOURCE when the
# build sets it). Holds the plugin stripped to its budget (BENCHMARKS.md, "The
# plugin's size", keeps what each part costs), for the build the budget was
# measured on only: the host's own toolchain, GCC 12 (Debian 12). A plugin
# that another compiler built (the release roots' g++ 14 and 16 with Debian's
# package build flags, contrib/dev/build-in-root.sh; clang) differs in size
# for reasons of its own: its size is printed as a NOTE, not judged. Every
# other check here applies to every build.
set -u
so=${GANGWAY_PLUGIN:?} bin=${GANGWAY_BIN:?}
. "${top_srcdir:?}/tests/verdicts.sh"

syms=$(nm -C --defined-only "$so" 2>/dev/null)
[ -n "$syms" ] || { fail "nm lists no symbols in $so (stripped?): run this on the build tree's plugin"; finish; }
# Namespaces and names of the launcher's side: the preflight's judgement
# (gangway::preflight, gpu, verbs), its commands (gangway::cli), the network
# and device stages (sys::...), the node check (gangway::health, and its I/O
# in sys::), the fleet (its store, SQLite, the metrics server and libmicrohttpd),
# the report, and HMAC (libcrypto's wrapper).
forbidden='gangway::(preflight|gpu|verbs|cli|health|fleet)::|gangway::sys::fleet::|sqlite3_|MHD_|sys::(run_[a-z_]*stage|nccl_|find_nccl|RdmaEndpoint|read_ib_ports|with_deadline|tcp_|Rendezvous|Coordinator|pmix|node_card|make_node_card|run_node_check|read_nvml|read_kmsg|act_on_slurm|run_command|load_state|save_state)|[Ss]ha256|[Hh]mac|Report\b|report_json'
found=$(grep -E "$forbidden" <<<"$syms" | head -5)
if [ -z "$found" ]; then pass "no preflight, GPU, RDMA, report or crypto symbol in gangway.so"
else fail "gangway.so holds launcher code, e.g.:"; echo "$found"; fi
# The check itself must see such code where it is: the launcher holds it.
grep -qE "$forbidden" <<<"$(nm -C --defined-only "$bin")" && pass "the same check finds them in the launcher" ||
  fail "the pattern finds nothing in the launcher either: the check is blind"
# libstdc++'s demangler (47 KB) comes only with its verbose terminate handler,
# which spank/terminate.cpp replaces (the plugin's size, issue 32 item 6).
found=$(grep -E '__cxa_demangle|__verbose_terminate_handler|d_print_comp' <<<"$syms" | head -3)
if [ -z "$found" ]; then pass "no demangler or verbose terminate handler in gangway.so"
else fail "gangway.so links libstdc++'s demangler (is spank/terminate.cpp in its sources?):"; echo "$found"; fi
libs=$(ldd "$so" 2>/dev/null)
if grep -qE 'libpmix|libcuda|libnccl|libibverbs|libcrypto|libslurm|libsqlite3|libmicrohttpd' <<<"$libs"; then fail "gangway.so links a library it must not:"; echo "$libs"
else pass "gangway.so links no PMIx, CUDA, NCCL, verbs, crypto, SLURM, SQLite or libmicrohttpd library"; fi
# The launcher's cryptography is OpenSSL's, not the tree's own (issue 15).
ldd "$bin" 2>/dev/null | grep -q 'libcrypto\.so\.3' && pass "the launcher links libcrypto (OpenSSL 3)" ||
  fail "the launcher does not link libcrypto.so.3: $(ldd "$bin" | grep -i crypto)"

for f in "$so" "$bin"; do
  name=$(basename "$f")
  readelf -d "$f" | grep -qE 'BIND_NOW|FLAGS_1.*NOW' && readelf -lW "$f" | grep -q GNU_RELRO &&
    pass "$name: full RELRO (GNU_RELRO, BIND_NOW)" || fail "$name: not linked with -z relro -z now"
  nm -D "$f" | grep -q '__stack_chk_fail' && pass "$name: stack protector" || fail "$name: no -fstack-protector-strong"
done
case "${HARDEN_CPPFLAGS:-}" in
  *_FORTIFY_SOURCE*)
    nm -D "$bin" | grep -qE ' U __[a-z_]+_chk' && pass "gangway: _FORTIFY_SOURCE checks linked" ||
      fail "gangway: built with $HARDEN_CPPFLAGS but calls no __*_chk function";;
  *) echo "note: this build does not set _FORTIFY_SOURCE (HARDEN_CPPFLAGS='${HARDEN_CPPFLAGS:-}'), not checked";;
esac

# Its size: every srun, sbatch, salloc and slurmstepd maps it. The budget is
# issue 32's (item 6): 600 KiB, raised to 624 KiB by the post-mortem's task
# record (issue 33, 28,672 bytes), then to 640 KiB by the samples of the
# running step (issue 41 item 7: 12,288 bytes, and their pressure lines a
# page more: 655,352 bytes, 8 under it); then down to 512 KiB when the
# plugin's code was compiled for size (lib/base/optimize_size.hpp: 426,048
# bytes; the 600 KiB of issue 42 with room for what comes).
# BENCHMARKS.md, "The plugin's size", has what each part costs. A feature
# that needs more states its cost there and raises this.
budget_kib=${GANGWAY_PLUGIN_BUDGET_KIB:-512}
tmp=$(mktemp) && strip -o "$tmp" "$so" && bytes=$(stat -c %s "$tmp")
rm -f "$tmp"
# The compilers that built it: each "GCC: (...) VERSION" of its .comment
# section (the plugin's objects, libstdc++'s and the C start files'). The
# budget holds where all of them are GCC 12.
compilers_of() { readelf -p .comment "$1" 2>/dev/null | sed -n 's/^ *\[ *[0-9a-f]*\] *//p' | sort -u; }
gcc12_only() { [ -n "$1" ] && ! grep -qv '^GCC: (.*) 12\.' <<<"$1"; }
compilers=$(compilers_of "$so")
if gcc12_only "$compilers"; then
  if [ "$bytes" -le $((budget_kib * 1024)) ]; then pass "gangway.so stripped: $bytes bytes ($((bytes / 1024)) KiB), within $budget_kib KiB"
  else fail "gangway.so stripped: $bytes bytes ($((bytes / 1024)) KiB), over its $budget_kib KiB: see BENCHMARKS.md, \"The plugin's size\""; fi
  # Not blind the other way: the same plugin with a .comment of GCC 14's is not judged.
  tmp=$(mktemp) && printf 'GCC: (Debian 14.2.0-19) 14.2.0\0' >"$tmp.c" &&
    objcopy --remove-section .comment --add-section .comment="$tmp.c" "$so" "$tmp" 2>/dev/null &&
    ! gcc12_only "$(compilers_of "$tmp")" && pass "a plugin GCC 14 built is not held to GCC 12's budget" ||
    fail "the compiler test takes a plugin whose .comment names GCC 14 for GCC 12's"
  rm -f "$tmp" "$tmp.c"
else
  echo "NOTE: gangway.so stripped: $bytes bytes ($((bytes / 1024)) KiB); its $budget_kib KiB budget is GCC 12's, and this one was built by: $(paste -sd';' <<<"${compilers:-an unknown compiler (no .comment)}")"
fi
finish
