#!/bin/bash
# Slurm Epilog helper (runs as root on each node of a job when it ends):
# drains the nodes that gangway's check found bad in this job, with a reason
# "gangway: ... (job J)" that is easy to find and to resume
# (scontrol update NodeName=X State=RESUME). `gangway run`/`gangway check`
# leave a request file per bad node in GANGWAY_DRAIN_DIR (default
# /var/spool/gangway/drain) on the job's first node when that directory
# exists. Create it on every node, writable by users, sticky, on a local
# file system:
#     install -d -m 1733 /var/spool/gangway/drain
# and call this script from your Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/*
# or from your existing epilog script).
#
# The decision is `gangway epilog-drain`'s (GANGWAY_BIN names gangway): only
# the job's first node's Epilog decides, at most GANGWAY_DRAIN_MAX nodes per
# job (default 2; 0: none), only the job's own nodes, only requests of the
# job's user; `gangway epilog-drain --help` and docs/check.md say more.
# Always exits 0: a failing Epilog would drain the node it runs on.
"${GANGWAY_BIN:-gangway}" epilog-drain ||
  logger -t gangway-drain -- "could not run ${GANGWAY_BIN:-gangway} epilog-drain (exit $?); no drain decided for job ${SLURM_JOB_ID:-?}" 2>/dev/null
exit 0
