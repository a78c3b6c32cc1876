#!/bin/bash
# `gangway doctor` and `gangway --version` against a synthetic SLURM version
# mismatch: a fake srun on PATH reports another release, and a copy of the
# plugin has its plugin_version patched to 23.11 (what building against a
# 23.11 spank.h gives, see newer_spank.sh). Each problem must give one
# PROBLEM: line that names what to rebuild or fix.
set -u
bin=${GANGWAY_BIN:?} so=${GANGWAY_PLUGIN:?}
work=$(mktemp -d "${TMPDIR:-/var/tmp}/gangway-doctor.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
built=$("$bin" --version 2>/dev/null | sed -n 's/.*built for SLURM \([0-9.]*\)).*/\1/p')
[ -n "$built" ] || { echo "FAIL: gangway --version names no SLURM: $("$bin" --version 2>&1)"; exit 1; }
major_minor=${built%.*}

mkdir -p "$work/bin" "$work/etc/plugstack.conf.d"
fake_slurm() {  # fake_slurm VERSION: srun --version (and sinfo) on PATH report it
  printf '#!/bin/sh\necho "slurm %s"\n' "$1" >"$work/bin/srun"
  cp "$work/bin/srun" "$work/bin/sinfo"
  chmod +x "$work/bin/srun" "$work/bin/sinfo"
}
doctor() {  # doctor ARGS... : output in $out, exit status in $rc
  out=$(PATH="$work/bin:$PATH" "$bin" doctor --plugstack "$work/etc/plugstack.conf" "$@" 2>&1); rc=$?
}
check() {  # check DESCRIPTION WANT_RC REGEX [NOT_REGEX]
  if [ "$rc" != "$2" ] || ! grep -qE -- "$3" <<<"$out" || { [ -n "${4:-}" ] && grep -qE -- "$4" <<<"$out"; }; then
    echo "FAIL: $1: rc=$rc (want $2), output:"; echo "$out"; fail=1
  else
    echo "ok: $1"
  fi
}

# A copy of the plugin whose plugin_version says 23.11.0, as if built against 23.11's spank.h.
mkdir -p "$work/v2311"
python3 - "$so" "$work/v2311/gangway.so" <<'EOF' || { echo "FAIL: could not patch plugin_version"; exit 1; }
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
sh = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
for s in sh:
    if s[1] != 11:  # SHT_DYNSYM
        continue
    strtab = sh[s[6]]
    for k in range(s[5] // 24):
        name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, s[4] + k * 24)
        end = data.index(b"\0", strtab[4] + name)
        if data[strtab[4] + name:end] == b"plugin_version":
            sec = sh[shndx]
            struct.pack_into("<I", data, sec[4] + value - sec[3], 0x170B00)
            open(sys.argv[2], "wb").write(data)
            sys.exit(0)
sys.exit(1)
EOF

# 1. Everything in order: the release the command was built for, one required line.
fake_slurm "$built"
echo "required $so iface=eth1 addr_template=%h-data" >"$work/etc/plugstack.conf"
doctor
check "matching SLURM, one required line: no problems" 0 'no problems found' 'PROBLEM'
grep -q "ok: .*plugstack.conf:1 loads $so (required); iface=eth1" <<<"$out" || { echo "FAIL: the plugstack line is not reported: $out"; fail=1; }
# The plugin's ident string survives its link (--gc-sections dropped it once: "gangway ?").
version=$("$bin" --version 2>/dev/null | sed -n 's/^gangway \([^ ]*\) .*/\1/p')
grep -q "ok: $so (gangway $version, built for SLURM $built)" <<<"$out" ||
  { echo "FAIL: the plugin's own version ($version) is not read from it: $out"; fail=1; }

# 2. SLURM upgraded under gangway: both the command and the plugin are for the old release.
fake_slurm 23.11.1
doctor
check "SLURM upgraded: the plugin is refused, says what to rebuild" 1 \
  "PROBLEM: $so was built for SLURM $major_minor but SLURM 23.11.1 runs here: srun and slurmd refuse it .*rebuild gangway against SLURM 23.11's headers"
check "SLURM upgraded: the command too" 1 "PROBLEM: this gangway command was built for SLURM $major_minor but SLURM 23.11.1 runs here"
out=$(PATH="$work/bin:$PATH" "$bin" --version 2>&1 >/dev/null); rc=$?
check "gangway --version warns on stderr, naming the rebuild" 0 \
  "^gangway: warning: built for SLURM $major_minor but .srun --version. is SLURM 23.11.1: .*rebuild gangway against SLURM 23.11"
fake_slurm "$built"
out=$(PATH="$work/bin:$PATH" "$bin" --version 2>&1 >/dev/null); rc=$?
[ -z "$out" ] && echo "ok: gangway --version is quiet when the releases match" || { echo "FAIL: unexpected warning: $out"; fail=1; }

# 3. A plugin built for another release than the running one (and than this command).
echo "required $work/v2311/gangway.so" >"$work/etc/plugstack.conf"
doctor
check "a 23.11 plugin on SLURM $built: refused, rebuild for $major_minor" 1 \
  "PROBLEM: $work/v2311/gangway.so was built for SLURM 23.11 but SLURM $built runs here: .*rebuild gangway against SLURM $major_minor's headers"
check "plugin and command from different builds" 1 "PROBLEM: the plugin \(SLURM 23.11\) and this command \(SLURM $major_minor\) come from different builds"

# 4. plugstack.conf mistakes, through an include as Debian's plugstack.conf has it.
echo "include $work/etc/plugstack.conf.d/*.conf" >"$work/etc/plugstack.conf"
echo "optional $so iface=eth1" >"$work/etc/plugstack.conf.d/gangway.conf"
doctor
check "optional instead of required" 1 "PROBLEM: $work/etc/plugstack.conf.d/gangway.conf:1 loads gangway.so as optional: .*use required"
echo "required $so ifcae=eth1" >"$work/etc/plugstack.conf.d/gangway.conf"
doctor
check "a misspelt site key" 1 'PROBLEM: .*gangway.conf:1: plugstack.conf: unknown key "ifcae"'
echo "required $so" >"$work/etc/plugstack.conf.d/other.conf"
doctor
check "loaded twice" 1 "PROBLEM: gangway.so is loaded 2 times"
rm -f "$work"/etc/plugstack.conf.d/*
doctor
check "no line loads gangway" 1 "PROBLEM: no line of $work/etc/plugstack.conf or its includes loads gangway.so|PROBLEM: no line of $work/etc/plugstack.conf loads gangway.so"
# Files that include each other (issue 23, item 9): five files each including
# all five, itself too. The doctor read 5^8 files for it (18 s, 97,656 output
# lines); now each file once, and one line about the cycle.
mkdir -p "$work/etc/cycle.d"
echo "include $work/etc/cycle.d/*.conf" >"$work/etc/plugstack.conf"
for i in 1 2 3 4 5; do echo "include $work/etc/cycle.d/*.conf" >"$work/etc/cycle.d/f$i.conf"; done
echo "required $so" >>"$work/etc/cycle.d/f3.conf"
start=$SECONDS
out=$(PATH="$work/bin:$PATH" timeout 60 "$bin" doctor --plugstack "$work/etc/plugstack.conf" 2>&1); rc=$?
check "files including each other: one line about the cycle" 1 \
  "PROBLEM: $work/etc/cycle.d/f1.conf:1 includes $work/etc/cycle.d/f1.conf, which is being read: a cycle .*remove the include \(and 14 more such includes\)$"
if [ "$(grep -c 'a cycle (' <<<"$out")" != 1 ] || [ "$(wc -l <<<"$out")" -gt 12 ] || ((SECONDS - start > 10)); then
  echo "FAIL: files including each other: $(wc -l <<<"$out") lines, $(grep -c 'a cycle (' <<<"$out") about the cycle, $((SECONDS - start)) s (want at most 12, 1, 10 s)"
  head -5 <<<"$out"; fail=1
else
  echo "ok: files including each other: $(wc -l <<<"$out") lines in $((SECONDS - start)) s"
fi
grep -q "ok: $work/etc/cycle.d/f3.conf:2 loads $so (required)" <<<"$out" ||
  { echo "FAIL: the gangway line inside the cycle is not reported: $(head -5 <<<"$out")"; fail=1; }
# A glob that matches 300 files: the doctor reads 256 (plugstack.conf and 255
# of them) and says where it stopped, and not that no line loads gangway.so.
mkdir -p "$work/etc/many.d"
for i in $(seq 1000 1299); do echo "# $i" >"$work/etc/many.d/$i.conf"; done
printf 'include %s/etc/many.d/*.conf\nrequired %s\n' "$work" "$so" >"$work/etc/plugstack.conf"
doctor
check "a glob matching 300 files: stops at 256 with one line" 1 \
  "PROBLEM: plugstack.conf and its includes go past 256 files \(at $work/etc/many.d/1255.conf\): the doctor stopped reading" \
  "no line of .* loads gangway.so"
rm -rf "$work/etc/cycle.d" "$work/etc/many.d"
echo "required $work/missing/gangway.so" >"$work/etc/plugstack.conf"
doctor
check "the plugin is not where plugstack.conf says" 1 "PROBLEM: $work/missing/gangway.so cannot be read"
echo "required $bin" >"$work/etc/plugstack.conf"
doctor --plugin /etc/hostname
check "not an ELF plugin" 1 "PROBLEM: /etc/hostname is not a 64-bit ELF shared object"
# Malformed ELF files (issue 15, item 9): section offsets, counts, sizes and symbol
# values that point outside the file or wrap round 2^64. Each is refused with one
# line, never a crash.
mkdir -p "$work/bad"
python3 - "$so" "$work/bad" <<'PY' || { echo "FAIL: could not write malformed ELFs"; exit 1; }
import struct, sys
good = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", good, 0x28)
shentsize, shnum = struct.unpack_from("<HH", good, 0x3A)
def patched(name, edits):
    d = bytearray(good)
    for off, fmt, val in edits:
        struct.pack_into(fmt, d, off, val)
    open(sys.argv[2] + "/" + name, "wb").write(d)
patched("shoff_wraps", [(0x28, "<Q", 2**64 - 64)])
patched("shoff_huge", [(0x28, "<Q", 2**63)])
patched("shnum_max", [(0x3C, "<H", 0xFFFF)])
sh = [struct.unpack_from("<IIQQQQIIQQ", good, shoff + i * shentsize) for i in range(shnum)]
for i, s in enumerate(sh):
    base = shoff + i * shentsize
    if s[1] == 11:  # SHT_DYNSYM: its offset, size and string table
        patched("dynsym_offset_wraps", [(base + 0x18, "<Q", 2**64 - 24)])
        patched("dynsym_size_huge", [(base + 0x20, "<Q", 2**64 - 24)])
        patched("dynsym_link_bad", [(base + 0x28, "<I", 0xFFFF)])
        strtab = shoff + s[6] * shentsize
        patched("strtab_offset_wraps", [(strtab + 0x18, "<Q", 2**64 - 1)])
        syms = [s[4] + k * 24 for k in range(s[5] // 24)]
        # every symbol's value and size pointing anywhere; every name past the end
        patched("symbols_wild", [e for o in syms for e in ((o + 8, "<Q", 2**64 - 2), (o + 16, "<Q", 2**64 - 1))])
        patched("symbol_names_wild", [(o, "<I", 0xFFFFFFFF) for o in syms])
    # a section's address at the top: addr - sh_addr wraps
    patched("addr_wraps_%d" % i, [(base + 0x10, "<Q", 2**64 - 1), (base + 0x18, "<Q", 2**64 - 8)])
open(sys.argv[2] + "/truncated", "wb").write(good[:0x40 + 8])
PY
for f in "$work"/bad/*; do
  doctor --plugin "$f"
  if [ "$rc" -gt 2 ]; then echo "FAIL: malformed ELF $(basename "$f"): doctor died (rc=$rc): $out"; fail=1
  else echo "ok: malformed ELF $(basename "$f"): rc=$rc, no crash"; fi
done
# PlugStackConfig in a file slurm.conf includes: the doctor reads the plugstack.conf it names, and
# says which Include it could not follow.
printf 'ClusterName=blue\nInclude site-%%c.conf\nInclude gone.conf\n' >"$work/etc/slurm.conf"
printf 'PlugStackConfig=%s/etc/elsewhere.conf\n' "$work" >"$work/etc/site-blue.conf"
echo "required $so" >"$work/etc/elsewhere.conf"
out=$(PATH="$work/bin:$PATH" SLURM_CONF="$work/etc/slurm.conf" "$bin" doctor 2>&1); rc=$?
if grep -q "ok: $work/etc/elsewhere.conf:1 loads $so (required)" <<<"$out" \
   && grep -q "^note: slurm.conf: $work/etc/slurm.conf:3: Include $work/etc/gone.conf: no such file" <<<"$out"; then
  echo "ok: PlugStackConfig found in slurm.conf's Include file; the Include it cannot follow is a note"
else echo "FAIL: slurm.conf Include: rc=$rc:"; echo "$out"; fail=1; fi
doctor --bogus
check "unknown option" 2 'unknown option "--bogus"'
exit $fail
