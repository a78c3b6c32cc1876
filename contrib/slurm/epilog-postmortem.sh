#!/bin/sh
# Epilog (as root on each node of a job, when it ends): gangway's post-mortem
# of the job on this node (gangway(1), POST-MORTEM). `gangway postmortem
# collect` reads what the plugin's slurmstepd wrote at each task's end under
# the plugin's postmortem_dir=, the kernel log of the job's window (GPU Xids,
# the OOM killer, a link down, hung tasks) and the dumps the job's ranks left
# (gangway's torch hook), keeps them as one record (DIR/JOB/node.json) and
# sends it to the site's collector, `gangway fleet serve --stops-key`, which
# waits for the job's nodes, judges who stopped the job and sets its
# AdminComment within a minute of its end. Install it in the Epilog's
# directory (slurm.conf: Epilog=/etc/slurm/epilog.d/*) or call it from your
# Epilog script, and set on every node:
#   GANGWAY_POSTMORTEM_DIR  the plugin's postmortem_dir= (%n: the node's name);
#                           default /var/spool/gangway/postmortem
#   GANGWAY_POSTMORTEM_URL  the collector, e.g. http://admin01:9464 (empty: kept, not sent)
#   GANGWAY_POSTMORTEM_KEY  the site's key file, as serve's --stops-key (root's, mode 0600);
#                           default /etc/gangway/stops.key
#   GANGWAY_POSTMORTEM_KEEP_DAYS  how long a job's node.json stays (default 7)
# here or in /etc/default/gangway-postmortem, which this script reads.
# A job that ran no step with the post-mortem on leaves nothing to collect:
# the script then only sends the outbox (below). It reads the kernel log, a
# few small files and sends one request (at most two tries of 3 s): about a
# second per job.
#
# A record serve does not take (no answer: serve down or restarting; a
# timeout; 503 busy) is kept in the node's outbox, DIR/outbox (root's, 0700;
# at most 256 records, 64 MiB, 7 days), and sent again, oldest first and
# signed afresh, by this script once serve answers, by
# prolog-postmortem.sh and by `gangway node-check --slurm`
# (HealthCheckProgram), each within 5 s.
#
# Always exits 0: a failing Epilog makes SLURM drain the node itself, with its
# own reason.
[ -r /etc/default/gangway-postmortem ] && . /etc/default/gangway-postmortem
dir=${GANGWAY_POSTMORTEM_DIR:-/var/spool/gangway/postmortem}
node=$(uname -n | cut -d. -f1)  # %n: the host name up to its first dot, as the plugin has it
base=$(printf '%s' "$dir" | sed "s/%n/$node/g")
# The records of jobs older than GANGWAY_POSTMORTEM_KEEP_DAYS (default 7):
# each job leaves its node.json (and the Prolog's snapshot) here (the outbox,
# not a job's, keeps its own bounds), nothing of
# the user's: collect removes the job's dump directory itself, within bounds
# (what a bound leaves waits in .trash, which each collect goes on emptying).
# The directory is root's (0711: no user can list it or put anything in it);
# find follows no link.
[ -d "$base" ] && find "$base" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' -mtime +"${GANGWAY_POSTMORTEM_KEEP_DAYS:-7}" \
  -exec rm -rf -- {} + 2>/dev/null
# Nothing of this job here: no step ran with postmortem_dir= on this node.
# The records that wait in the outbox still go.
if [ ! -d "$base/${SLURM_JOB_ID:-none}" ]; then
  [ -n "${GANGWAY_POSTMORTEM_URL:-}" ] && ${GANGWAY_BIN:-gangway} postmortem resend --dir="$dir" \
    --to="$GANGWAY_POSTMORTEM_URL" --key="${GANGWAY_POSTMORTEM_KEY:-/etc/gangway/stops.key}"
  exit 0
fi
if [ -n "${GANGWAY_POSTMORTEM_URL:-}" ]; then
  ${GANGWAY_BIN:-gangway} postmortem collect --dir="$dir" --to="$GANGWAY_POSTMORTEM_URL" \
    --key="${GANGWAY_POSTMORTEM_KEY:-/etc/gangway/stops.key}" ${GANGWAY_KMSG_ROOT:+--kmsg-root="$GANGWAY_KMSG_ROOT"}
else
  ${GANGWAY_BIN:-gangway} postmortem collect --dir="$dir" ${GANGWAY_KMSG_ROOT:+--kmsg-root="$GANGWAY_KMSG_ROOT"}
fi
exit 0
