#!/bin/bash
# Bad input costs one clear line and nothing else: a malformed plugstack key or
# a bad option is refused by srun/sbatch before any allocation; a problem found
# at task start fails the task, never slurmstepd, and never drains a node.
. "$(dirname "$0")/lib.sh"

refused_before_allocation() {  # DESCRIPTION REGEX CMD...
  local what=$1 re=$2; shift 2
  local before after err rc
  before=$(next_job_id)
  err=$("$@" 2>&1 >/dev/null); rc=$?
  after=$(next_job_id)
  local lines; lines=$(grep -cE "$re" <<<"$err")
  if [ $rc != 0 ] && [ "$lines" = 1 ] && [ "$before" = "$after" ]; then pass "$what: $(grep -E "$re" <<<"$err")"
  else fail "$what: rc=$rc, $lines matching line(s), next job id $before -> $after; stderr: $err"; fi
}

nodes_not_drained() {
  local bad; bad=$(sinfo -h -N -o '%N %T %E' | grep -vE ' (idle|allocated|mixed|completing) ' || true)
  if [ -z "$bad" ]; then pass "$1: no node drained"; else fail "$1: nodes left in a bad state: $bad"; fi
}

plugstack iface=eth1 ifcae=eth1
refused_before_allocation "srun, unknown plugstack key" 'gangway: plugstack.conf: unknown key "ifcae"' srun -N1 true
refused_before_allocation "sbatch, unknown plugstack key" 'gangway: plugstack.conf: unknown key "ifcae"' sbatch -N1 --wrap true
plugstack iface=eth1 port_range=99-1
refused_before_allocation "srun, malformed port_range" 'gangway: plugstack.conf: port_range=99-1' srun -N1 true
plugstack iface=eth1 node_addrs_max=11000
refused_before_allocation "srun, node_addrs_max past NODE_ADDRS' size limit" \
  'gangway: plugstack.conf: node_addrs_max=11000 lets NODE_ADDRS reach 440000 bytes .*at most 2560' srun -N1 true

plugstack $SITE_ARGS
refused_before_allocation "srun --gangway=bogus" 'gangway: --gangway=bogus is not a mode' srun -N1 --gangway=bogus true
refused_before_allocation "sbatch --gangway=bogus" 'gangway: --gangway=bogus is not a mode' sbatch -N1 --gangway=bogus --wrap true
GANGWAY_MODE=fast refused_before_allocation "GANGWAY_MODE=fast" 'gangway: GANGWAY_MODE=fast is not a mode' srun -N1 true
refused_before_allocation "srun --gangway-iface=a/b" 'gangway: --gangway-iface=a/b is not an interface name' srun -N1 --gangway-iface=a/b true

# Problems only a node can see: the task fails with the reason on the user's stderr.
err=$(srun -N2 --gangway-iface=eth9 true 2>&1); rc=$?
if [ $rc != 0 ] && grep -q 'gangway: data interface eth9 has no IP address' <<<"$err"; then pass "missing data interface fails the task with the reason"
else fail "missing interface: rc=$rc: $err"; fi
nodes_not_drained "missing interface"

plugstack iface=eth1   # node names resolve to the management network only
err=$(srun -N2 true 2>&1); rc=$?
if [ $rc != 0 ] && grep -q 'none on the network of eth1' <<<"$err" && grep -q 'addr_template' <<<"$err"; then
  pass "management-only names are refused, with the fix named"
else fail "management-only names: rc=$rc: $err"; fi
nodes_not_drained "management-only names"

# The same in a batch job: a failing batch script, no drained node.
plugstack $SITE_ARGS
rc=0; GANGWAY_IFACE=eth9 sbatch --wait -N1 -o "$WORK/batch_bad.log" --wrap 'echo started' >/dev/null 2>&1 || rc=$?
if [ $rc != 0 ] && ! grep -q started "$WORK/batch_bad.log" 2>/dev/null; then pass "batch script with a bad interface is not started"
else fail "batch with bad interface: rc=$rc, log: $(cat "$WORK/batch_bad.log" 2>/dev/null)"; fi
nodes_not_drained "batch with bad interface"

# And the plugin turned off by the site keeps jobs running untouched.
plugstack $SITE_ARGS mode=off
out=$(srun -N1 $DUMP 2>&1) && ! grep -q MASTER_ADDR <<<"$out" && pass "mode=off: job runs, nothing set" || fail "mode=off: $out"
plugstack $SITE_ARGS
finish
