#!/bin/bash
# Slurm Epilog helper (runs as root on each node of a job when it ends):
# drains the nodes that gangway's preflight found bad in this job, with a
# reason starting "gangway:" so that they are easy to find and to resume
# (scontrol update NodeName=X State=RESUME). `gangway run`/`gangway check`
# leave a request file per bad node in GANGWAY_DRAIN_DIR (default
# /var/spool/gangway/drain) on the job's first node when that directory
# exists. Create it on every node, writable by users, sticky, on a local
# file system (a spool shared between nodes would let the other nodes'
# Epilogs remove the first node's requests before it reads them):
#     install -d -m 1733 /var/spool/gangway/drain
# and call this script from your Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/*
# or from your existing epilog script).
#
# One Epilog decides for a job: the one on the job's first node, the first
# name of `scontrol show hostnames "$SLURM_NODELIST"`, recognised by
# SLURMD_NODENAME (slurmd sets both for the Epilog; the user sets neither).
# The Epilogs of the job's other nodes honour nothing and remove the job's
# request files there: a user can write files into every node's spool, and
# counted node by node they would drain every node of the job.
#
# What the job's user can cause: the requests are files the job's user owns,
# so a user can ask for the drain of their own job's nodes, at most
# GANGWAY_DRAIN_MAX of them per job (default 2; 0 turns drains off), counting
# the nodes slurmctld already shows drained by gangway for this job (a
# requeued job keeps its id, and its next run ends in another Epilog). A job
# that asks for more drains none: many bad nodes at once is a fault of the
# network or of the job, not of the nodes. A user can never drain a node
# outside their job.
#
# What another user can cause: nothing. Files named for this job that the
# job's user does not own are removed unread before anything is counted
# (one line says how many), so they neither drain nor hide the job's own.
#
# A request is honoured only when the file, opened without following links
# (`gangway drain-request`, GANGWAY_BIN), is a regular file of at most 4 KiB
# owned by the job's user, named for this job and for one of this job's
# nodes (a strict node name compared as a string, followed by ',' and 16 hex
# digits when `gangway check` found another user's file under the plain
# name: the names are predictable, and in the sticky spool nobody may
# replace another's file). At most 64 of the job
# user's names are read, whatever else is in the directory; more drains none.
# Always exits 0: a failing Epilog would drain the node it runs on.
DIR=${GANGWAY_DRAIN_DIR:-/var/spool/gangway/drain}
SCONTROL=${GANGWAY_SCONTROL:-scontrol}
GANGWAY=${GANGWAY_BIN:-gangway}
MAX=${GANGWAY_DRAIN_MAX:-2}
job=${SLURM_JOB_ID:-}
uid=${SLURM_JOB_UID:-}
[ -n "$job" ] && [ -n "$uid" ] && [ -d "$DIR" ] || exit 0
case $job in *[!0-9_]*) exit 0 ;; esac
case $uid in *[!0-9]*) exit 0 ;; esac
# To syslog for the admins, and to stderr for whoever runs it by hand.
log() { echo "gangway-drain: $*" >&2; logger -t gangway-drain -- "$*" 2>/dev/null; }
case $MAX in '' | *[!0-9]*)
  log "GANGWAY_DRAIN_MAX is not a number; using 2"; MAX=2 ;;
esac
GLOB="gangway-drain.$job.*"
# find's -uid, not -user: a user *named* "1234" would be taken for that name.
job_files() { find "$DIR" -mindepth 1 -maxdepth 1 -name "$GLOB" "$@" 2>/dev/null; }
remove_all() { job_files -delete; }
# Anyone else's files named for this job: removed unread, before anything is
# counted, so that no stranger's file decides how many names the job has.
# One pass, one count; the work is one unlink per file the stranger made.
strangers=$(job_files ! -uid "$uid" -delete -printf . | wc -c)
[ "$strangers" -gt 0 ] &&
  log "job $job: removed $strangers drain request file(s) not owned by the job's user (uid $uid) from $DIR unread; only the job's user can ask for its drains"
# The job user's names, at most 64 of them: the directory is the users'.
NAMES=64
mapfile -d '' -t files < <(job_files -uid "$uid" -print0 | head -z -n $((NAMES + 1)))
[ ${#files[@]} = 0 ] && exit 0
printable() { local s=${1//[^[:print:]]/?}; echo "${s:0:300}"; }
# Which node decides: the job's first node. Both names come from slurmd: this
# node's in SLURMD_NODENAME, the job's nodes in SLURM_NODELIST (22.05, 24.11
# and 26.05) and SLURM_JOB_NODELIST (24.11 and 26.05; not 22.05, where reading
# it alone drained nothing, ever). gangway-node-check(8), "slurmd's
# variables", has the table. Nothing of the job's environment reaches an
# Epilog (tests/integration/slurmd_scripts.sh checks it on each release), so
# neither is the user's; where both are set they must agree.
here=${SLURMD_NODENAME:-} list=${SLURM_NODELIST:-}
if [ -n "${SLURM_JOB_NODELIST:-}" ] && [ "$SLURM_JOB_NODELIST" != "$list" ]; then
  if [ -n "$list" ]; then
    log "job $job: draining none: SLURM_JOB_NODELIST ($(printable "$SLURM_JOB_NODELIST")) and SLURM_NODELIST ($(printable "$list")) name different nodes, so the job's first node is unknown; requests left in $DIR"
    exit 0
  fi
  list=$SLURM_JOB_NODELIST
fi
unset_vars=
[ -z "$here" ] && unset_vars="SLURMD_NODENAME"
[ -z "$list" ] && unset_vars="${unset_vars:+$unset_vars and }SLURM_NODELIST (or SLURM_JOB_NODELIST)"
if [ -n "$unset_vars" ]; then
  log "job $job: draining none: $unset_vars not set, so this node cannot tell whether it is the job's first node (slurmd sets them for the Epilog: run this script as slurmd's Epilog, or from it); requests left in $DIR"
  exit 0
fi
mapfile -t nodes < <($SCONTROL show hostnames "$list" 2>/dev/null)
first=${nodes[0]:-}
if [ -z "$first" ]; then
  log "job $job: draining none: '$SCONTROL show hostnames' gave no node for the job's node list $(printable "$list"); requests left in $DIR"
  exit 0
fi
if [ "$here" != "$first" ]; then
  log "job $job: ignored and removed its drain requests on $(printable "$here"): only the Epilog on the job's first node ($(printable "$first")) decides its drains; run gangway check in a step that includes $(printable "$first")"
  remove_all; exit 0
fi
if [ ${#files[@]} -gt $NAMES ]; then
  log "job $job: its user left more than $NAMES drain request files for it; draining none"
  remove_all; exit 0
fi
is_job_node() {
  local n
  for n in "${nodes[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}
drain_nodes=() reasons=() paths=()
for f in "${files[@]}"; do
  # A SLURM node name: letters, digits, '.', '_', '-'. No blanks, no newline.
  # `gangway check` adds ',' and 16 hex digits when another user's file holds
  # the plain name (',' is in no node name).
  node=
  [[ ${f#"$DIR/gangway-drain.$job."} =~ ^([A-Za-z0-9][A-Za-z0-9._-]{0,63})(,[0-9a-f]{16})?$ ]] && node=${BASH_REMATCH[1]}
  if [ -z "$node" ] || ! is_job_node "$node"; then
    log "ignoring $(printable "$f"): not a node of job $job"; rm -f -- "$f"; continue
  fi
  if ! text=$("$GANGWAY" drain-request --uid="$uid" -- "$f" 2>&1); then
    log "ignoring request: $(printable "$text")"; rm -f -- "$f"; continue
  fi
  # Two requests for one node count, and drain, once.
  [[ " ${drain_nodes[*]} " == *" $node "* ]] && { rm -f -- "$f"; continue; }
  drain_nodes+=("$node") paths+=("$f")
  reasons+=("$(sed -n 's/^reason=//p' <<<"$text" | head -n 1 | tr -cd '[:alnum:] ._:/,=()+-' | cut -c1-120)")
done
[ ${#drain_nodes[@]} = 0 ] && exit 0
too_many() {  # COUNT [WHY]: the cap is passed, nothing is drained
  log "job $job asked to drain $1 nodes${2:-}, more than GANGWAY_DRAIN_MAX=$MAX; draining none (many bad nodes at once is a fault of the network or of the job)"
  remove_all; exit 0
}
[ ${#drain_nodes[@]} -gt "$MAX" ] && too_many ${#drain_nodes[@]}
# Nodes drained for this job before (an earlier run of a requeued job): they
# count against the cap. Ours is the reason's last "(job N)", which slurmctld
# follows with " [user@time]"; a user's text before it has no '[' (the
# reasons are cut to the characters above), so no other job's reason can
# name this job there.
if ! shown=$($SCONTROL -o show node 2>/dev/null); then
  log "job $job: draining none: scontrol -o show node failed, so the nodes already drained for this job are unknown; requests left in $DIR"
  exit 0
fi
mine="^NodeName=([^ ]+) .* Reason=gangway: [^[]*[(]job ${job}[)]( [[]|\$)"
before=()
while IFS= read -r line; do
  [[ $line =~ $mine ]] && before+=("${BASH_REMATCH[1]}")
done < <(grep -F "(job $job)" <<<"$shown")
if [ ${#before[@]} -gt 0 ]; then
  total=${#before[@]}
  for n in "${drain_nodes[@]}"; do
    [[ " ${before[*]} " == *" $n "* ]] || total=$((total + 1))
  done
  [ "$total" -gt "$MAX" ] && too_many "$total" " (${#before[@]} of them drained for it before: ${before[*]})"
fi
for i in "${!drain_nodes[@]}"; do
  node=${drain_nodes[$i]} reason=${reasons[$i]} f=${paths[$i]}
  if $SCONTROL update NodeName="$node" State=DRAIN Reason="gangway: ${reason:-preflight failed} (job $job)"; then
    log "drained $node: ${reason} (job $job)"
    rm -f -- "$f"
  else
    log "could not drain $node (job $job); request left in $f"
  fi
done
exit 0
