#!/bin/bash
# Slurm Epilog helper (runs as root on each node of a job when it ends):
# drains the nodes that gangway's preflight found bad in this job, with a
# reason starting "gangway:" so that they are easy to find and to resume
# (scontrol update NodeName=X State=RESUME). `gangway run`/`gangway check`
# leave a request file per bad node in GANGWAY_DRAIN_DIR (default
# /var/spool/gangway/drain) when that directory exists. Create it on every
# node, writable by users, sticky:
#     install -d -m 1733 /var/spool/gangway/drain
# and call this script from your Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/*
# or from your existing epilog script).
#
# What a user can cause: the requests are files the job's user owns, so a
# user can ask for the drain of their own job's nodes, at most
# GANGWAY_DRAIN_MAX of them per job (default 2; 0 turns drains off). A job
# that asks for more drains none: many bad nodes at once is a fault of the
# network or of the job, not of the nodes. A user can never drain a node
# outside their job.
#
# A request is honoured only when the file, opened without following links
# (`gangway drain-request`, GANGWAY_BIN), is a regular file of at most 4 KiB
# owned by the job's user, named for this job and for one of this job's
# nodes (a strict node name compared as a string). At most 64 names are
# read, whatever else is in the directory; more drains none.
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
# The request names, at most 64 of them: the directory is the users'.
NAMES=64
mapfile -d '' -t files < <(find "$DIR" -maxdepth 1 -name "gangway-drain.$job.*" -print0 2>/dev/null | head -z -n $((NAMES + 1)))
[ ${#files[@]} = 0 ] && exit 0
remove_all() { find "$DIR" -maxdepth 1 -name "gangway-drain.$job.*" -delete 2>/dev/null; }
printable() { local s=${1//[^[:print:]]/?}; echo "${s:0:300}"; }
if [ ${#files[@]} -gt $NAMES ]; then
  log "job $job left more than $NAMES drain request files; draining none"
  remove_all; exit 0
fi
mapfile -t nodes < <($SCONTROL show hostnames "${SLURM_JOB_NODELIST:-}" 2>/dev/null)
is_job_node() {
  local n
  for n in "${nodes[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}
drain_nodes=() reasons=() paths=()
for f in "${files[@]}"; do
  node=${f#"$DIR/gangway-drain.$job."}
  # A SLURM node name: letters, digits, '.', '_', '-'. No blanks, no newline.
  if ! [[ $node =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]] || ! is_job_node "$node"; then
    log "ignoring $(printable "$f"): not a node of job $job"; rm -f -- "$f"; continue
  fi
  if ! text=$("$GANGWAY" drain-request --uid="$uid" -- "$f" 2>&1); then
    log "ignoring request: $(printable "$text")"; rm -f -- "$f"; continue
  fi
  drain_nodes+=("$node") paths+=("$f")
  reasons+=("$(sed -n 's/^reason=//p' <<<"$text" | head -n 1 | tr -cd '[:alnum:] ._:/,=()+-' | cut -c1-120)")
done
if [ ${#drain_nodes[@]} -gt "$MAX" ]; then
  log "job $job asked to drain ${#drain_nodes[@]} nodes, more than GANGWAY_DRAIN_MAX=$MAX; draining none (many bad nodes at once is a fault of the network or of the job)"
  remove_all; exit 0
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
