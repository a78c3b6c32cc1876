#!/bin/bash
# contrib/epilog/gangway-drain.sh with a stand-in scontrol that records what
# it was asked: it drains the job's own bad nodes named in request files
# owned by the job's user, and ignores forged or foreign requests. Only the
# Epilog on the job's first node (node08 of node[08-10]) decides; files of
# other users neither drain nor hide the job's own. The script runs `gangway
# epilog-drain` (GANGWAY_BIN), which holds every rule (lib/slurm/drain_rules).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
EPILOG=$top_srcdir/contrib/epilog/gangway-drain.sh
W=$(mktemp -d /tmp/gangway-epilog.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/verdicts.sh"
cat >"$W/scontrol" <<'SH'
#!/bin/bash
# The job's nodes: only node[08-10] is a list this stand-in knows.
if [ "$1 $2" = "show hostnames" ]; then [ "$3" = 'node[08-10]' ] && printf 'node08\nnode09\nnode10\n'; exit 0; fi
# The nodes as slurmctld shows them: the test writes "shown", or "shown_fails" to fail.
if [ "$*" = "-o show node" ]; then
  [ -e "$(dirname "$0")/shown_fails" ] && exit 1
  cat "$(dirname "$0")/shown" 2>/dev/null; exit 0
fi
echo "$*" >>"$(dirname "$0")/calls"
SH
chmod +x "$W/scontrol"
mkdir "$W/drain"
me=$(id -u)
printf 'node=node10\njob=42\nreason=slow sending 0.4 Gb/s; $(rm -rf /) `x`\n' >"$W/drain/gangway-drain.42.node10"
printf 'reason=unreachable\n' >"$W/drain/gangway-drain.42.node99"     # not a node of the job
printf 'reason=slow\n' >"$W/drain/gangway-drain.43.node09"            # another job's request
ln -s "$W/drain/gangway-drain.43.node09" "$W/drain/gangway-drain.42.node08"  # a symlink
GANGWAY_DRAIN_DIR=$W/drain GANGWAY_SCONTROL=$W/scontrol SLURM_JOB_ID=42 SLURM_JOB_UID=$me SLURM_NODELIST='node[08-10]' SLURMD_NODENAME=node08 \
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
GANGWAY_DRAIN_DIR=$W/drain GANGWAY_SCONTROL=$W/scontrol SLURM_JOB_ID=44 SLURM_JOB_UID=$((me + 1)) SLURM_NODELIST='node[08-10]' SLURMD_NODENAME=node08 \
  bash "$EPILOG" 2>/dev/null
[ ! -e "$W/calls" ] && pass "a request not owned by the job's user drains nothing" || fail "foreign owner: $(cat "$W/calls")"
run_epilog() {  # JOB [VAR=VALUE...]: the epilog for job JOB of node[08-10] on node08, bounded in time
  local j=$1; shift
  env GANGWAY_DRAIN_DIR="$W/drain" GANGWAY_SCONTROL="$W/scontrol" SLURM_JOB_ID="$j" SLURM_JOB_UID="$me" \
    SLURM_NODELIST='node[08-10]' SLURMD_NODENAME=node08 "$@" timeout 20 bash "$EPILOG" 2>>"$W/err"
}
epilog() { rm -f "$W/calls" "$W/err"; run_epilog "$@"; }  # the same, with fresh calls and errors
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
# (a) The cap is per job, not per node: a user can write requests into every node's spool, and
# each node's Epilog sees only its own. Two requests on each of the 3 nodes, together naming all
# three, with GANGWAY_DRAIN_MAX=2: only node08's Epilog decides (before, each drained its two).
rm -f "$W/calls" "$W/err"
for n in node08 node09 node10; do mkdir "$W/spool.$n"; done
plant() { printf 'reason=slow\n' >"$W/spool.$1/gangway-drain.60.$2"; }  # SPOOL'S NODE, NODE ASKED FOR
plant node08 node08; plant node08 node09; plant node09 node09; plant node09 node10; plant node10 node10; plant node10 node08
for n in node08 node09 node10; do run_epilog 60 GANGWAY_DRAIN_DIR="$W/spool.$n" SLURMD_NODENAME=$n GANGWAY_DRAIN_MAX=2; done
drained=$(grep -o 'NodeName=[^ ]*' "$W/calls" 2>/dev/null | sort -u | tr '\n' ' ')
if [ "$(wc -l <"$W/calls" 2>/dev/null)" = 2 ] && [ "$drained" = "NodeName=node08 NodeName=node09 " ]; then
  pass "requests planted on 3 nodes' spools drain 2 in all (GANGWAY_DRAIN_MAX=2), by node08's Epilog: $drained"
else fail "per-job cap across nodes: $(tr '\n' ';' 2>/dev/null <"$W/calls")"; fi
[ -z "$(ls -A "$W/spool.node08" "$W/spool.node09" "$W/spool.node10" | grep gangway-drain)" ] \
  && pass "and every node's spool is emptied of the job's requests" || fail "left: $(ls "$W"/spool.*)"

# (c) The Epilog of a node other than the job's first drains nothing and removes the job's files,
# with one line naming the node that decides.
printf 'reason=slow\n' >"$W/drain/gangway-drain.63.node09"
printf 'reason=slow\n' >"$W/drain/gangway-drain.63.node10"
epilog 63 SLURMD_NODENAME=node09
if [ ! -e "$W/calls" ] && [ -z "$(ls "$W/drain" | grep '^gangway-drain.63')" ] \
   && [ "$(grep -c 'first node (node08) decides' "$W/err")" = 1 ]; then
  pass "node09's Epilog drains nothing, removes the job's requests, and one line says node08 decides"
else fail "non-first node: calls $(tr '\n' ';' 2>/dev/null <"$W/calls") left $(ls "$W/drain" | grep '^gangway-drain.63') / $(cat "$W/err")"; fi
# Without SLURMD_NODENAME (the Epilog run by hand) it cannot tell: nothing drained, a line says why.
printf 'reason=slow\n' >"$W/drain/gangway-drain.65.node09"
epilog 65 SLURMD_NODENAME=
[ ! -e "$W/calls" ] && grep -q 'SLURMD_NODENAME' "$W/err" && pass "without SLURMD_NODENAME nothing is drained, and a line says so" \
  || fail "no SLURMD_NODENAME: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
rm -f "$W/drain/gangway-drain.65.node09"
# Without the job's node list: the same, and the line names the variable (issue 35: on 22.05,
# which sets SLURM_NODELIST only, the Epilog read SLURM_JOB_NODELIST and drained nothing, ever).
printf 'reason=slow\n' >"$W/drain/gangway-drain.69.node09"
epilog 69 SLURM_NODELIST=
[ ! -e "$W/calls" ] && [ "$(grep -c 'SLURM_NODELIST (or SLURM_JOB_NODELIST) not set' "$W/err")" = 1 ] && [ -e "$W/drain/gangway-drain.69.node09" ] \
  && pass "without SLURM_NODELIST nothing is drained, the request is left, and one line names the variable" \
  || fail "no SLURM_NODELIST: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
# SLURM_JOB_NODELIST alone (24.11 and 26.05 set it beside SLURM_NODELIST, which a later
# release may drop) is the job's list too.
epilog 69 SLURM_NODELIST= SLURM_JOB_NODELIST='node[08-10]'
[ "$(cat "$W/calls" 2>/dev/null)" = "update NodeName=node09 State=DRAIN Reason=gangway: slow (job 69)" ] \
  && pass "SLURM_JOB_NODELIST alone: node09 drained" || fail "SLURM_JOB_NODELIST alone: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
# Both, as 24.11 and 26.05 set them: they must agree.
printf 'reason=slow\n' >"$W/drain/gangway-drain.69.node09"
epilog 69 SLURM_JOB_NODELIST='node[08-10]'
[ "$(cat "$W/calls" 2>/dev/null)" = "update NodeName=node09 State=DRAIN Reason=gangway: slow (job 69)" ] \
  && pass "SLURM_JOB_NODELIST and SLURM_NODELIST alike: node09 drained" || fail "both lists: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
printf 'reason=slow\n' >"$W/drain/gangway-drain.70.node09"
epilog 70 SLURM_JOB_NODELIST='node[09-10]'
[ ! -e "$W/calls" ] && grep -q 'name different nodes' "$W/err" && [ -e "$W/drain/gangway-drain.70.node09" ] \
  && pass "SLURM_JOB_NODELIST and SLURM_NODELIST that differ: nothing drained, a line says why" \
  || fail "lists that differ: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
rm -f "$W/drain/gangway-drain.70.node09"

# Nodes slurmctld already shows drained by gangway for this job (an earlier run of a requeued job)
# count against the cap; a reason of another job that names this one in its own text does not.
{
  echo 'NodeName=node12 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: slow (job 64) (job 99) [alice@2024-05-01T10:00:00]'
  echo 'NodeName=node13 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: slow (job 640) [root@2024-05-01T10:00:00]'
  echo 'NodeName=node14 Arch=x86_64 State=IDLE'
} >"$W/shown"
for n in node08 node09; do printf 'reason=slow\n' >"$W/drain/gangway-drain.64.$n"; done
epilog 64
[ "$(wc -l <"$W/calls" 2>/dev/null)" = 2 ] && pass "another job's reason naming this job does not count against its cap" \
  || fail "forged reason counted: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
echo 'NodeName=node11 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: unreachable (job 64) [root@2024-05-01T09:00:00]' >>"$W/shown"
for n in node08 node09; do printf 'reason=slow\n' >"$W/drain/gangway-drain.64.$n"; done
epilog 64
[ ! -e "$W/calls" ] && grep -q 'drained for it before: node11' "$W/err" \
  && pass "node11 drained for this job before + 2 requests > GANGWAY_DRAIN_MAX=2: none drained, a line says why" \
  || fail "already drained: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
rm -f "$W/shown"; : >"$W/shown_fails"
printf 'reason=slow\n' >"$W/drain/gangway-drain.66.node09"
epilog 66
[ ! -e "$W/calls" ] && grep -q 'show node failed' "$W/err" && pass "when slurmctld cannot list the nodes, nothing is drained" \
  || fail "show node failing: $(cat "$W/calls" 2>/dev/null) / $(cat "$W/err")"
rm -f "$W/shown_fails" "$W/drain/gangway-drain.66.node09"

# A request written beside another user's file of the same name (NAME,16 hex digits, as `gangway
# check` writes it then) is read as NAME; two requests for one node drain it once; any other
# suffix is no node's.
printf 'reason=slow\n' >"$W/drain/gangway-drain.67.node09,0123456789abcdef"
printf 'reason=slow\n' >"$W/drain/gangway-drain.67.node09"
printf 'reason=slow\n' >"$W/drain/gangway-drain.67.node10,xyz"
epilog 67
[ "$(cat "$W/calls" 2>/dev/null)" = "update NodeName=node09 State=DRAIN Reason=gangway: slow (job 67)" ] \
  && [ -z "$(ls "$W/drain" | grep '^gangway-drain.67')" ] \
  && pass "NODE,16 hex digits is read as NODE, two requests for node09 drain it once, NODE,xyz drains nothing" \
  || fail "suffixed names: $(tr '\n' ';' 2>/dev/null <"$W/calls") left $(ls "$W/drain" | grep '^gangway-drain.67') / $(cat "$W/err")"
if [ "$me" = 0 ]; then
  printf 'reason=planted\n' >"$W/drain/gangway-drain.68.node09"; chown 12345 "$W/drain/gangway-drain.68.node09"
  printf 'reason=slow\n' >"$W/drain/gangway-drain.68.node09,00112233445566ff"
  epilog 68
  [ "$(cat "$W/calls" 2>/dev/null)" = "update NodeName=node09 State=DRAIN Reason=gangway: slow (job 68)" ] \
    && pass "another user's file under the plain name: the user's request beside it drains node09" \
    || fail "planted plain name: $(tr '\n' ';' 2>/dev/null <"$W/calls") / $(cat "$W/err")"
fi

# (b) Another user's files named for the job are removed unread before anything is counted: 65,
# or 5000, of them (one a request for node10) neither stop the user's own request for node09 nor
# drain. Giving files to another uid needs root.
stranger() {  # JOB COUNT: COUNT files of uid 12345 named for JOB, and its request for node10
  local i
  for i in $(seq 1 "$2"); do : >"$W/drain/gangway-drain.$1.s$i"; done
  printf 'reason=forged\n' >"$W/drain/gangway-drain.$1.node10"
  find "$W/drain" -name "gangway-drain.$1.*" -exec chown 12345 {} +
}
if [ "$me" = 0 ]; then
  for c in "61 65" "62 5000"; do
    j=${c% *} k=${c#* }
    stranger "$j" "$k"
    printf 'reason=slow\n' >"$W/drain/gangway-drain.$j.node09"
    t0=$(date +%s); epilog "$j"; secs=$(( $(date +%s) - t0 ))
    if [ "$(cat "$W/calls" 2>/dev/null)" = "update NodeName=node09 State=DRAIN Reason=gangway: slow (job $j)" ] \
       && [ "$(grep -c "removed $((k + 1)) drain request file(s) not owned by the job's user" "$W/err")" = 1 ]; then
      pass "$((k + 1)) files of another user drain nothing and do not stop the user's request for node09 (${secs}s)"
    else fail "$k stranger files: calls $(tr '\n' ';' 2>/dev/null <"$W/calls") / $(head -c 600 "$W/err")"; fi
    [ -z "$(ls "$W/drain" | grep "^gangway-drain\.$j\.")" ] && pass "and they are removed" \
      || fail "left: $(ls "$W/drain" | grep -c "^gangway-drain\.$j\.")"
  done
else
  [ "${CI:-}" = true ] && fail "the checks of another user's files need root (chown) and CI=true"
  echo "SKIP: the checks of another user's files need root, to give files to uid 12345"
fi
# Without gangway (GANGWAY_BIN wrong): the Epilog still exits 0 (a failing Epilog drains its node).
printf 'reason=slow\n' >"$W/drain/gangway-drain.71.node09"
epilog 71 GANGWAY_BIN=/nonexistent/gangway; rc=$?
[ $rc = 0 ] && [ ! -e "$W/calls" ] && pass "without gangway the Epilog exits 0 and drains nothing" || fail "no gangway: rc $rc"
finish
