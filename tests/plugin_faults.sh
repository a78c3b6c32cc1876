#!/bin/bash
# The plugin in slurmstepd when memory runs out in user_init (issue 15, item
# 11): an exception other than gangway's own Error (std::bad_alloc here) must
# neither cross into slurmstepd nor let a task start without its variables;
# task_init fails with one line naming it. bench/stepd_sim.c plays
# slurmstepd's side of SPANK (node 1 of a 4-node, 8-task step) and, with
# STEPD_USER_INIT_AS_KB=K, runs user_init with its heap full but for K KiB and
# no address space to grow: tried for a few K, since where the first
# allocation fails depends on the heap. Before the fix the task started
# without gangway's variables and no line said why; and before the plugin
# made its thread-local data early, glibc aborted the whole step at some
# sizes (at all of them but 16 KiB on the CI machine).
# Also the post-mortem's directories the same simulated step makes (postmortem_dir=).
set -u
so=${GANGWAY_PLUGIN:?}
. "${top_srcdir:?}/tests/verdicts.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && { fail "needs root (a private mount namespace for /etc/hosts) and CI=true"; finish; }
  echo "SKIP: needs root, for a private mount namespace with the step's /etc/hosts"; exit 77
fi
W=$(mktemp -d /var/tmp/gangway-plugin-faults.XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -Wall -rdynamic -o "$W/stepd_sim" "$top_srcdir/bench/stepd_sim.c" -ldl || { fail "bench/stepd_sim.c does not build"; finish; }
printf '127.0.0.1 localhost\n198.18.0.8 node08\n198.18.0.9 node09\n198.18.0.10 node10\n198.18.0.11 node11\n' >"$W/hosts"
export SLURM_STEP_NODELIST='node[08-11]' SLURM_STEP_TASKS_PER_NODE='2(x4)' SLURM_NODEID=1 SLURM_STEP_NUM_NODES=4 \
  SLURM_STEP_NUM_TASKS=8 SLURM_JOB_ID=7 SLURM_STEP_ID=0 SLURM_JOB_NODELIST='node[08-11]' SIM_FIRST_RANK=2
# The step's /etc/hosts, bound over the real one in a private mount namespace. In a release's
# root (contrib/dev/build-in-root.sh) / is not a mount point, so unshare cannot make it private,
# but root.sh already made every mount there private: then the propagation is left as it is.
propagation=private
if ! unshare -m true 2>/dev/null; then
  [ "$(findmnt -rn -o PROPAGATION | sort -u)" = private ] ||
    { fail "unshare -m fails and some mounts are shared: the step's /etc/hosts would leak to this system"; finish; }
  propagation=unchanged
fi
sim() { unshare -m --propagation $propagation sh -c 'mount --bind "$0/hosts" /etc/hosts && exec "$@"' "$W" "$W/stepd_sim" --rounds 1 "$so" "$@"; }

sim >"$W/plain.out" 2>&1 && pass "the simulated step starts its tasks with memory to spare" ||
  fail "the simulated step fails without any fault: $(tail -3 "$W/plain.out")"

# postmortem_dir= (issues 40 and 41): the base root's 0711, the job's directory root's 0711, the
# dump directory the job's owner's (nobody here), who can then write a dump in it; a base under
# a directory others may write, or owned by a user, is refused in one line and nothing is made.
chmod 0711 "$W" && mkdir -m 0755 "$W/pm"
h=$(uname -n | cut -d. -f1)
SIM_JOB_UID=65534 SIM_JOB_GID=65534 sim "postmortem_dir=$W/pm/%n" >"$W/pm.out" 2>&1; rc=$?
modes=$(stat -c '%U %a' "$W/pm/$h" "$W/pm/$h/7" "$W/pm/$h/7/user" 2>&1 | paste -sd,)
if [ $rc = 0 ] && [ "$modes" = "root 711,root 711,nobody 700" ] && [ -f "$W/pm/$h/7/task.0.2" ] &&
   setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'echo "{}" >"$1/rank.2.json"' sh "$W/pm/$h/7/user" 2>"$W/pm.err"; then
  pass "postmortem_dir=: root's 0711 base and job directory, the owner's dump directory, where uid 65534 writes its dump"
else fail "postmortem_dir=: rc $rc, modes $modes: $(cat "$W/pm.err" 2>/dev/null) $(tail -2 "$W/pm.out")"; fi
mkdir -m 0777 "$W/open" && mkdir -m 0711 "$W/mine" && chown 65534 "$W/mine"
for refused in "open/pm:/open is writable by group or others" "mine:/mine is owned by uid 65534, not root"; do
  sub=${refused%%:*} why=${refused#*:}
  SIM_JOB_UID=65534 sim "postmortem_dir=$W/$sub" >"$W/pm.out" 2>&1; rc=$?
  lines=$(grep -c 'postmortem_dir:' "$W/pm.out")
  if [ $rc = 0 ] && [ "$lines" = 1 ] && grep -q "plugin error: gangway: postmortem_dir: $W/$sub: $W$why.*no post-mortem record for this step" "$W/pm.out" &&
     [ -z "$(ls -A "$W/open")" ] && [ -z "$(ls -A "$W/mine")" ]; then
    pass "postmortem_dir=$sub: refused in one line, nothing made, the step runs"
  else fail "postmortem_dir=$sub: rc $rc, $lines line(s): $(grep postmortem_dir "$W/pm.out" | head -2) $(ls -A "$W/open" "$W/mine")"; fi
done

# "ok": the tasks started (user_init found enough memory); "refused": task_init failed with the
# one line; anything else (a signal, an escaped exception, a task started after a lost error) fails.
# Each size twice: with the environment as it is, and 3 KiB larger. Where the first allocation
# fails depends on the process's starting layout, which the environment changes (by hand here, a
# larger one moved it; the CI machine's failed at other sizes than a developer's).
refused=0 tried=0
for run in 1 2 3 4 6 8 12 16 1+pad 2+pad 4+pad 8+pad 12+pad 16+pad; do
  kb=${run%+pad} pad=
  [ "$run" = "$kb" ] || pad=$(printf '%03000d' 0)
  o="$W/$run.out" what="$kb KiB${pad:+ (environment 3 KiB larger)}"
  tried=$((tried + 1))
  GANGWAY_SIM_PAD=$pad STEPD_USER_INIT_AS_KB=$kb sim >"$o" 2>&1; rc=$?
  lines=$(grep -c 'plugin error' "$o") distinct=$(grep 'plugin error' "$o" | sort -u | wc -l)
  if [ $rc = 0 ] && [ "$lines" -gt 0 ]; then fail "$what: the tasks started after an error: $(grep 'plugin error' "$o" | head -2)"
  elif [ $rc = 0 ]; then echo "  $what: user_init had enough"
  elif [ $rc = 1 ] && grep -q 'round 0 failed (exit 6)' "$o" && [ "$lines" -ge 1 ] &&
       [ "$distinct" = 1 ] && grep -q 'plugin error: gangway: internal error in user_init: std::bad_alloc' "$o"; then
    echo "  $what: std::bad_alloc in user_init; each task_init failed with it"; refused=$((refused + 1))
  elif [ $rc = 1 ] && grep -q 'round 0 failed (exit 6)' "$o" && [ "$distinct" = 1 ]; then
    # A library call that failed for want of memory (getaddrinfo's EAI_MEMORY) becomes gangway's
    # own error: still one line, and no task started.
    echo "  $what: each task_init failed with: $(grep -m1 'plugin error' "$o")"
  elif grep -q 'cannot allocate memory for thread-local data' "$o"; then
    # glibc allocates a dlopen'd library's thread-local data on first use and aborts the process
    # when it cannot: the plugin makes its own at each callback's entry (spank/guard.hpp), so the
    # throw of std::bad_alloc finds it there. Before that, this aborted slurmstepd.
    fail "$what: glibc aborted the step allocating the plugin's thread-local data late"
  elif grep -q 'terminate called' "$o"; then
    fail "$what: std::terminate: an exception left a callback (or its handler allocated): $(grep -A1 'terminate called' "$o" | tail -1)"
  else fail "$what: rc $rc: $(tail -4 "$o")"; fi
done
[ $refused -ge 1 ] && pass "out of memory in user_init: the task is refused with one line, $refused of $tried runs" ||
  fail "no size made user_init run out of memory (the test is blind): $(tail -2 "$W/4.out")"
finish
