#!/bin/sh
# Prolog (as root on each node of a job, before it starts): the RDMA ports'
# error counters and states, the configured links' carrier states and
# counters, and the RDMA devices and GPUs present at the job's start, for
# gangway's post-mortem (gangway(1), POST-MORTEM). `gangway postmortem
# snapshot` keeps them in DIR/JOB/ports.start and DIR/JOB/node.start; the
# Epilog's `gangway postmortem collect` (epilog-postmortem.sh) compares them
# at the job's end: a counter grown past node-check.conf's allowance
# (symbol_error_max, link_downed_max, link_error_recovery_max), a port gone
# down, a link that lost carrier during the job (even if it has it again),
# an RDMA device or a GPU gone is the node's evidence; a link without carrier
# at the start and at the end (an unplugged port, docker0) is not. Run it in
# slurmd's network namespace (as SLURM runs a Prolog): the links are that
# namespace's. It also keeps the kernel log's last record number
# (DIR/JOB/kmsg.start), from which collect counts the records a flood made
# the log lose during the job. Install it in the Prolog's directory
# (slurm.conf: Prolog=/etc/slurm/prolog.d/*) or call it from your Prolog,
# with the same /etc/default/gangway-postmortem as the Epilog's.
#
# Then, with GANGWAY_POSTMORTEM_URL set, the records of earlier jobs that
# fleet serve did not take when their Epilog sent them (kept in the node's
# outbox, DIR/outbox) are sent again, oldest first, within 5 s
# (`gangway postmortem resend`): nothing is tried once serve does not
# answer, so a serve that is down costs the job's start one refused
# connection (or, where its host does not answer at all, 3 s).
#
# It always exits 0: a failed snapshot costs the comparison only, and a
# Prolog that fails drains the node and requeues the job.
[ -r /etc/default/gangway-postmortem ] && . /etc/default/gangway-postmortem
dir=${GANGWAY_POSTMORTEM_DIR:-/var/spool/gangway/postmortem}
${GANGWAY_BIN:-gangway} postmortem snapshot --dir="$dir" ${GANGWAY_KMSG_ROOT:+--kmsg-root="$GANGWAY_KMSG_ROOT"}
[ -n "${GANGWAY_POSTMORTEM_URL:-}" ] && ${GANGWAY_BIN:-gangway} postmortem resend --dir="$dir" \
  --to="$GANGWAY_POSTMORTEM_URL" --key="${GANGWAY_POSTMORTEM_KEY:-/etc/gangway/stops.key}"
exit 0
