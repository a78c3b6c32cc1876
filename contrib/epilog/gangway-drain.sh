#!/bin/bash
# Slurm Epilog helper (runs as root on each node of a job when it ends):
# drains the nodes that gangway's preflight found bad in this job, with a
# reason starting "gangway:" so that they are easy to find and to resume
# (scontrol update NodeName=X State=RESUME). Users cannot drain nodes;
# `gangway run`/`gangway check` only leave a request file per bad node in
# GANGWAY_DRAIN_DIR (default /var/spool/gangway/drain) when that directory
# exists. Create it on every node, writable by users, sticky:
#     install -d -m 1733 /var/spool/gangway/drain
# and call this script from your Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/*
# or from your existing epilog script).
#
# A request is honoured only when the file is a regular file owned by the
# job's user, named for this job, and names one of this job's nodes: a user
# can have only their own job's nodes drained, never anyone else's.
# Always exits 0: a failing Epilog would drain the node it runs on.
DIR=${GANGWAY_DRAIN_DIR:-/var/spool/gangway/drain}
SCONTROL=${GANGWAY_SCONTROL:-scontrol}
job=${SLURM_JOB_ID:-}
uid=${SLURM_JOB_UID:-}
[ -n "$job" ] && [ -n "$uid" ] && [ -d "$DIR" ] || exit 0
case $job in *[!0-9_]*) exit 0 ;; esac
log() { logger -t gangway-drain -- "$*" 2>/dev/null || echo "gangway-drain: $*" >&2; }
nodes=$($SCONTROL show hostnames "${SLURM_JOB_NODELIST:-}" 2>/dev/null)
shopt -s nullglob
for f in "$DIR/gangway-drain.$job."*; do
  node=${f#"$DIR/gangway-drain.$job."}
  if [ -L "$f" ] || [ ! -f "$f" ] || [ "$(stat -c %u "$f")" != "$uid" ]; then
    log "ignoring $f: not a regular file owned by uid $uid"; rm -f -- "$f"; continue
  fi
  if ! grep -qxF -- "$node" <<<"$nodes"; then
    log "ignoring $f: $node is not a node of job $job"; rm -f -- "$f"; continue
  fi
  reason=$(sed -n 's/^reason=//p' "$f" | head -n 1 | tr -cd '[:alnum:] ._:/,=()+-' | cut -c1-120)
  if $SCONTROL update NodeName="$node" State=DRAIN Reason="gangway: ${reason:-preflight failed} (job $job)"; then
    log "drained $node: ${reason} (job $job)"
    rm -f -- "$f"
  else
    log "could not drain $node (job $job); request left in $f"
  fi
done
exit 0
