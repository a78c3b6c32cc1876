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
finish
