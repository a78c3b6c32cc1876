#!/bin/bash
# contrib/epilog/gangway-drain.sh with a stand-in scontrol that records what
# it was asked: it drains the job's own bad nodes named in request files
# owned by the job's user, and ignores forged or foreign requests.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
EPILOG=$top_srcdir/contrib/epilog/gangway-drain.sh
W=$(mktemp -d /tmp/gangway-epilog.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/verdicts.sh"
cat >"$W/scontrol" <<'SH'
#!/bin/bash
if [ "$1 $2" = "show hostnames" ]; then echo node08; echo node09; echo node10; exit 0; fi
echo "$*" >>"$(dirname "$0")/calls"
SH
chmod +x "$W/scontrol"
mkdir "$W/drain"
me=$(id -u)
printf 'node=node10\njob=42\nreason=slow sending 0.4 Gb/s; $(rm -rf /) `x`\n' >"$W/drain/gangway-drain.42.node10"
printf 'reason=unreachable\n' >"$W/drain/gangway-drain.42.node99"     # not a node of the job
printf 'reason=slow\n' >"$W/drain/gangway-drain.43.node09"            # another job's request
ln -s "$W/drain/gangway-drain.43.node09" "$W/drain/gangway-drain.42.node08"  # a symlink
GANGWAY_DRAIN_DIR=$W/drain GANGWAY_SCONTROL=$W/scontrol SLURM_JOB_ID=42 SLURM_JOB_UID=$me SLURM_JOB_NODELIST='node[08-10]' \
  bash "$EPILOG" 2>"$W/err"; rc=$?
calls=$(cat "$W/calls" 2>/dev/null)
[ $rc = 0 ] && pass "the epilog exits 0" || fail "epilog exit $rc"
if [ "$(wc -l <<<"$calls")" = 1 ] && [[ $calls == "update NodeName=node10 State=DRAIN Reason=gangway: slow sending 0.4 Gb/s (rm -rf /) x (job 42)" ]]; then
  pass "drains node10 only, reason prefixed gangway: and stripped of shell characters"
else fail "scontrol calls: $calls"; fi
[ ! -e "$W/drain/gangway-drain.42.node10" ] && [ ! -e "$W/drain/gangway-drain.42.node99" ] && [ -e "$W/drain/gangway-drain.43.node09" ] \
  && pass "handled requests removed, another job's left alone" || fail "request files: $(ls "$W/drain")"
# A request owned by someone else than the job's user is ignored.
rm -f "$W/calls"
printf 'reason=slow\n' >"$W/drain/gangway-drain.44.node09"
GANGWAY_DRAIN_DIR=$W/drain GANGWAY_SCONTROL=$W/scontrol SLURM_JOB_ID=44 SLURM_JOB_UID=$((me + 1)) SLURM_JOB_NODELIST='node[08-10]' \
  bash "$EPILOG" 2>/dev/null
[ ! -e "$W/calls" ] && pass "a request not owned by the job's user drains nothing" || fail "foreign owner: $(cat "$W/calls")"
epilog() {  # JOB [VAR=VALUE...]: the epilog for job JOB on node[08-10], bounded in time
  local j=$1; shift
  rm -f "$W/calls"
  env GANGWAY_DRAIN_DIR="$W/drain" GANGWAY_SCONTROL="$W/scontrol" SLURM_JOB_ID="$j" SLURM_JOB_UID="$me" \
    SLURM_JOB_NODELIST='node[08-10]' "$@" timeout 20 bash "$EPILOG" 2>"$W/err"
}
# A newline in the file's name makes two names: neither may reach scontrol.
printf 'reason=slow\n' >"$W/drain/gangway-drain.50.node99 x"$'\n'"node09"
epilog 50
[ ! -e "$W/calls" ] && pass "a name with a newline drains nothing" || fail "newline name: $(cat "$W/calls")"
[ -z "$(ls "$W/drain" | grep '^gangway-drain.50')" ] && pass "and its request is removed" || fail "left: $(ls "$W/drain")"
# A request larger than 4 KiB is not read (a sparse 1 GiB file took 2 GB of the epilog's memory).
{ printf 'reason=slow\n'; head -c 8192 /dev/zero | tr '\0' x; } >"$W/drain/gangway-drain.51.node09"
epilog 51
[ ! -e "$W/calls" ] && grep -q "larger than" "$W/err" && pass "an oversized request is refused, with a line saying so" \
  || fail "oversized: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
# A FIFO neither blocks the epilog nor drains.
mkfifo "$W/drain/gangway-drain.52.node09"
epilog 52; rc=$?
[ $rc = 0 ] && [ ! -e "$W/calls" ] && pass "a FIFO is refused without blocking" || fail "fifo: rc $rc $(cat "$W/calls" 2>/dev/null)"
# The site's cap per job (GANGWAY_DRAIN_MAX, default 2): beyond it nothing is drained.
for n in node08 node09 node10; do printf 'reason=slow\n' >"$W/drain/gangway-drain.53.$n"; done
epilog 53
[ ! -e "$W/calls" ] && grep -q "GANGWAY_DRAIN_MAX=2" "$W/err" && pass "3 requests over the default cap of 2 drain none" \
  || fail "cap: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
[ -z "$(ls "$W/drain" | grep '^gangway-drain.53')" ] && pass "and the job's requests are removed" || fail "left: $(ls "$W/drain")"
for n in node08 node09 node10; do printf 'reason=slow\n' >"$W/drain/gangway-drain.54.$n"; done
epilog 54 GANGWAY_DRAIN_MAX=3
[ "$(wc -l <"$W/calls" 2>/dev/null)" = 3 ] && pass "GANGWAY_DRAIN_MAX=3 lets the 3 drain" || fail "cap 3: $(cat "$W/calls" 2>/dev/null)"
for n in node08; do printf 'reason=slow\n' >"$W/drain/gangway-drain.55.$n"; done
epilog 55 GANGWAY_DRAIN_MAX=0
[ ! -e "$W/calls" ] && pass "GANGWAY_DRAIN_MAX=0 drains nothing" || fail "cap 0: $(cat "$W/calls")"
# Thousands of files: a bounded number of names is read, nothing drained, the epilog ends.
for i in $(seq 1 3000); do : >"$W/drain/gangway-drain.56.node$i"; done
epilog 56; rc=$?
[ $rc = 0 ] && [ ! -e "$W/calls" ] && pass "3000 request files drain none" || fail "many: rc $rc"
finish
