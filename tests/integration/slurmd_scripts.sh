#!/bin/bash
# The scripts gangway ships for slurmd to run around a job, run by the real
# slurmd of each release as slurm.conf configures them (cluster.sh up
# --prolog=... --epilog=...): a site's Prolog and Epilog that call
# contrib/slurm/prolog-node-check.sh, contrib/epilog/gangway-drain.sh and
# contrib/slurm/epilog-node-check.sh with the site's settings only (a
# node-local drain spool per node, the node check's fixture tree), so the
# scripts see exactly the environment slurmd gives them. Two jobs of an
# ordinary user (nobody) at once:
#  (a) job A on node[09-10] leaves on its first node, as `gangway check` does,
#      a request to drain node10 and fails: its Epilog drains node10, with
#      gangway's reason naming the job;
#  (b) job B on node[08,11] leaves a request for node09 (not its node) and is
#      submitted with SLURM_JOB_NODELIST, SLURM_NODELIST and SLURMD_NODENAME
#      set to node09 (and a probe variable) in its environment (sbatch
#      --export=ALL; its script exports them too): nothing is
#      drained but node10, and none of the job's values reach a Prolog or
#      an Epilog;
#  (c) the node-check Epilog runs the full level after job A (failed), on
#      each of its nodes, and not after job B (succeeded); the Prolog runs
#      the quick level on the nodes of both.
# The Prolog and Epilog write the environment slurmd gave them under
# $WORK/env, and the test prints the variables' names per context
# (man/gangway-node-check.8's table of them is made from these lines; node_check.sh
# does the same for HealthCheckProgram).
. "$(dirname "$0")/lib.sh"
CLUSTER=$top_srcdir/tests/cluster/cluster.sh
A_NODES='node[09-10]' B_NODES=node08,node11
a='' b=''
undo() {
  [ -n "$a" ] && scancel "$a" 2>/dev/null
  [ -n "$b" ] && scancel "$b" 2>/dev/null
  for n in node08 node09 node10 node11; do scontrol update NodeName="$n" State=RESUME >/dev/null 2>&1; done
  cp "$GANGWAY_CLUSTER_DIR"/log/slurmctld.log "$GANGWAY_CLUSTER_DIR"/log/slurmd-node*.log "$WORK/" 2>/dev/null
  # Back to the cluster every other test expects: no Prolog, no Epilog.
  "$CLUSTER" up >/dev/null 2>&1
  return 0
}
trap 'undo; rm -rf "$CLUSTER_LOCK"' EXIT  # replaces lib.sh's trap, so frees its lock too
rm -rf "${WORK:?}"/*
chmod 755 "$WORK"
# The job's user writes its output and its drain requests; each node has its
# own spool (local to the node, as gangway-drain.sh asks), made as it says.
mkdir -p "$WORK/env" "$WORK/state" "$WORK/log"
mkdir -m 1777 "$WORK/out"
mkdir "$WORK/drain"
for n in node08 node09 node10 node11; do mkdir -m 1733 "$WORK/drain/$n"; done
# A node with no GPU and no HCA: healthy at every level, so the node check
# drains nothing here (the node tests judge what it finds).
mkdir -p "$WORK/tree/sys/bus/pci/devices"
: >"$WORK/node-check.conf"
# gangway as the node-check scripts call it: the real check on that tree,
# each call recorded with its exit status.
cat >"$WORK/gangway-nc" <<SH
#!/bin/sh
'$GANGWAY_BIN' "\$@" --sysfs-root='$WORK/tree' --config='$WORK/node-check.conf' --state='$WORK/state/'\$(uname -n) --fleet-spool=
rc=\$?
echo "\$(uname -n) \${SLURM_JOB_ID:-?} \$* exit \$rc" >>'$WORK/log/node-check.calls'
exit \$rc
SH
# The site's Prolog and Epilog: the environment slurmd gave them, then
# gangway's scripts with the site's settings added, nothing else changed.
cat >"$WORK/prolog" <<SH
#!/bin/sh
n=\$(uname -n)
env >'$WORK/env/prolog.'\$n.\${SLURM_JOB_ID:-none}
GANGWAY_BIN='$WORK/gangway-nc' '$top_srcdir/contrib/slurm/prolog-node-check.sh' 2>>'$WORK/log/prolog-'\$n.log
exit 0
SH
cat >"$WORK/epilog" <<SH
#!/bin/sh
n=\$(uname -n)
env >'$WORK/env/epilog.'\$n.\${SLURM_JOB_ID:-none}
GANGWAY_DRAIN_DIR='$WORK/drain/'\$n GANGWAY_BIN='$GANGWAY_BIN' '$top_srcdir/contrib/epilog/gangway-drain.sh' 2>>'$WORK/log/drain-'\$n.log
GANGWAY_BIN='$WORK/gangway-nc' '$top_srcdir/contrib/slurm/epilog-node-check.sh' 2>>'$WORK/log/epilog-'\$n.log
echo "\${SLURM_JOB_ID:-none}" >>'$WORK/log/epilog-done.'\$n
exit 0
SH
chmod 0755 "$WORK/gangway-nc" "$WORK/prolog" "$WORK/epilog"
"$CLUSTER" up --prolog="$WORK/prolog" --epilog="$WORK/epilog" >"$WORK/up.log" 2>&1 \
  || { echo "FAIL: the cluster did not come up with the Prolog and Epilog: $(tail -5 "$WORK/up.log")"; exit 1; }
cd "$WORK/out" || exit 1

# A drain request as `gangway check` writes it (lib/preflight/drain.cpp), by
# the job's user, into the spool of the node it runs on (the job's first).
request() {  # request NODE REASON: the job script's lines that ask to drain NODE
  echo "printf 'node=%s\\njob=%s\\nreason=%s\\n' $1 \"\$SLURM_JOB_ID\" '$2' >'$WORK/drain/'\"\$SLURMD_NODENAME/gangway-drain.\$SLURM_JOB_ID.$1\""
}
# Each job runs a step on both its nodes, as a job does: slurmd runs the
# Prolog on a node before the job's first step there (the batch script's on
# the first node), and the Epilog on each node when the job ends.
cat >a.sbatch <<EOS
#!/bin/sh
echo "A ran as \$(id -u) probe=\${GANGWAY_PROBE:-}"
srun true
$(request node10 'unreachable no answer from node10 in 10 s')
exit 1
EOS
# B's own script sets them too: only the job's steps could see that.
cat >b.sbatch <<EOS
#!/bin/sh
echo "B ran as \$(id -u) probe=\${GANGWAY_PROBE:-}"
srun true
$(request node09 'slow 0.4 Gb/s')
export SLURM_JOB_NODELIST=node09 SLURM_NODELIST=node09 SLURMD_NODENAME=node09
exit 0
EOS
probe=gangway-probe-$$
a=$(sbatch --parsable --uid=65534 --gid=65534 -N2 -w "$A_NODES" -o a.out a.sbatch) || fail "sbatch A failed"
# --export=ALL: with a list (ALL,VAR=...) 26.05 also loads the user's login
# environment (--get-user-env), which nobody has: the job is held.
b=$(SLURM_JOB_NODELIST=node09 SLURM_NODELIST=node09 SLURMD_NODENAME=node09 GANGWAY_PROBE=$probe \
  sbatch --parsable --uid=65534 --gid=65534 -N2 -w "$B_NODES" -o b.out --export=ALL b.sbatch) \
  || fail "sbatch B failed"
# Until both jobs are gone and each of their four nodes' Epilogs has finished.
epilogs_done() {
  local n
  for n in node09 node10; do grep -qx "$a" "$WORK/log/epilog-done.$n" 2>/dev/null || return 1; done
  for n in node08 node11; do grep -qx "$b" "$WORK/log/epilog-done.$n" 2>/dev/null || return 1; done
}
t0=$SECONDS
until epilogs_done; do
  [ $((SECONDS - t0)) -ge 120 ] && break
  sleep 0.5
done
if epilogs_done; then pass "jobs A ($a, $A_NODES) and B ($b, $B_NODES) ended, and so did their four Epilogs ($((SECONDS - t0)) s)"
else fail "after $((SECONDS - t0)) s: A $(scontrol -o show job "$a" 2>&1 | grep -o 'JobState=[^ ]*'), B $(scontrol -o show job "$b" 2>&1 | grep -o 'JobState=[^ ]*'); Epilogs done: $(cat "$WORK"/log/epilog-done.* 2>/dev/null | tr '\n' ' ')"; fi
# Both scripts ran, as nobody, and B's had the probe: it was in the job's environment.
grep -qx "A ran as 65534 probe=" a.out 2>/dev/null && grep -qx "B ran as 65534 probe=$probe" b.out 2>/dev/null \
  && pass "both job scripts ran as nobody, B's with the probe in its environment" \
  || fail "the job scripts' output: A: $(cat a.out 2>&1) B: $(cat b.out 2>&1)"
sleep 1  # scontrol's update reaches slurmctld before the Epilog ends; one more second for a slow machine

state_of() { scontrol show node "$1" | sed -n 's/.* State=\([^ ]*\).*/\1/p'; }
reason_of() { scontrol show node "$1" | sed -n 's/^ *Reason=\(.*\) \[.*/\1/p'; }
drained() { case $(state_of "$1") in *DRAIN*) return 0 ;; esac; return 1; }
logs() { tail -n 3 "$WORK"/log/drain-*.log 2>/dev/null | tr '\n' ' '; }

# (a) node10 drained by A's Epilog on node09, with gangway's reason naming A.
if drained node10 && [ "$(reason_of node10)" = "gangway: unreachable no answer from node10 in 10 s (job $a)" ]; then
  pass "(a) job A's Epilog drained node10: \"$(reason_of node10)\""
else fail "(a) node10 is $(state_of node10) \"$(reason_of node10)\"; drain logs: $(logs)"; fi
left=$(cd "$WORK/drain" && find . -name 'gangway-drain.*' | sort | tr '\n' ' ')
[ -z "$left" ] && pass "(a) the requests were removed from the spools" || fail "(a) left in the spools: $left"

# (b) nothing else drained; B's request for a node outside it was refused, said so.
others=""; for n in node08 node09 node11; do drained "$n" && others+=" $n ($(reason_of "$n"))"; done
[ -z "$others" ] && pass "(b) node08, node09 and node11 not drained" || fail "(b) drained:$others"
grep -q "ignoring .*gangway-drain\.$b\.node09: not a node of job $b" "$WORK/log/drain-node08.log" \
  && pass "(b) B's Epilog on node08 refused its request for node09: not a node of job $b" \
  || fail "(b) node08's drain log: $(cat "$WORK/log/drain-node08.log" 2>/dev/null)"
# None of the values B's submitter set reaches a Prolog or Epilog of B.
leaked=$(grep -l -e "=node09\$" -e "$probe" "$WORK"/env/*."$b" 2>/dev/null | xargs -r -n1 basename | tr '\n' ' ')
seen=$(ls "$WORK"/env/*."$b" 2>/dev/null | wc -l)
[ "$seen" = 4 ] && [ -z "$leaked" ] \
  && pass "(b) none of B's job environment (SLURM_JOB_NODELIST, SLURM_NODELIST, SLURMD_NODENAME, a probe) reached its 2 Prologs and 2 Epilogs" \
  || fail "(b) $seen environments of B; with B's values: $leaked"

# (c) the node-check Epilog: the full level after A only, on A's two nodes; the Prolog's quick level before each job.
calls() { sort "$WORK/log/node-check.calls" 2>/dev/null | grep -e "$1" | cut -d' ' -f1,2 | tr '\n' ' '; }
full=$(calls "node-check --slurm --level=full .* exit 0$") quick=$(calls "node-check --slurm --level=quick .* exit 0$")
[ "$full" = "node09 $a node10 $a " ] && pass "(c) the node-check Epilog ran the full level (healthy) after the failed job A on node09 and node10, not after B" \
  || fail "(c) full-level runs (node job): $full; $(cat "$WORK/log/node-check.calls" 2>/dev/null | tr '\n' ';')"
[ "$quick" = "node08 $b node09 $a node10 $a node11 $b " ] && pass "(c) the node-check Prolog ran the quick level (healthy) on each job's nodes" \
  || fail "(c) quick-level runs: $quick"
grep -q . "$WORK"/log/epilog-node*.log 2>/dev/null && echo "(the node checks' own lines: $(cat "$WORK"/log/epilog-node*.log | head -5 | tr '\n' ' '))"

# What slurmd gave each context, names only (the values are the jobs').
for ctx in prolog epilog; do
  echo "variables of the $ctx on SLURM ${GANGWAY_CLUSTER_RELEASE:-22.05}: $(cut -d= -f1 "$WORK"/env/$ctx.*."$a" | sort -u | tr '\n' ' ')"
done
finish
