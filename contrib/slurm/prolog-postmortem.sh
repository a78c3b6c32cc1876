#!/bin/sh
# Prolog (as root on each node of a job, before it starts): the RDMA ports'
# error counters and states at the job's start, for gangway's post-mortem
# (gangway(1), POST-MORTEM). `gangway postmortem snapshot` keeps them in
# DIR/JOB/ports.start; the Epilog's `gangway postmortem collect`
# (epilog-postmortem.sh) compares them at the job's end: a counter grown past
# node-check.conf's allowance (symbol_error_max, link_downed_max,
# link_error_recovery_max) or a port gone down is the node's evidence (a node
# without RDMA ports keeps none). It also keeps the kernel log's last record
# number (DIR/JOB/kmsg.start), from which collect counts the records a flood
# made the log lose during the job. Install it in the Prolog's directory
# (slurm.conf: Prolog=/etc/slurm/prolog.d/*) or call it from your Prolog,
# with the same /etc/default/gangway-postmortem as the Epilog's.
#
# It always exits 0: a failed snapshot costs the comparison only, and a
# Prolog that fails drains the node and requeues the job.
[ -r /etc/default/gangway-postmortem ] && . /etc/default/gangway-postmortem
${GANGWAY_BIN:-gangway} postmortem snapshot --dir="${GANGWAY_POSTMORTEM_DIR:-/var/spool/gangway/postmortem}" \
  ${GANGWAY_KMSG_ROOT:+--kmsg-root="$GANGWAY_KMSG_ROOT"}
exit 0
