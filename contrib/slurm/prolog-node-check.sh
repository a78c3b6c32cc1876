#!/bin/sh
# Prolog (as root on each node of a job: slurmd runs it before the job's first
# step on the node, the batch script's on the first node; with
# PrologFlags=Alloc, on every node when the job is allocated): gangway's node
# check at the quick level. A node found bad (a failure confirmed by an
# immediate re-test) is drained with a "gangway:" reason, so no later job
# lands on it. Install it in the Prolog's directory (slurm.conf:
# Prolog=/etc/slurm/prolog.d/*) or call it from your Prolog script.
#
# It exits 0 whatever was found: a failing Prolog makes SLURM drain the node
# once more with its own reason ("Prolog error"), which gangway then leaves to
# the admin, and holds the job. A site that prefers the job requeued off the
# bad node at once can end this script with the check's status instead
# (`exit $?`: 3 on a confirmed failure).
# Time: well under a second on a healthy node; at most the --timeout.
${GANGWAY_BIN:-gangway} node-check --slurm --level=quick --timeout=8
exit 0
