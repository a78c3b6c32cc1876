#!/bin/sh
# Epilog (as root on each node of a job, when it ends): after a job that
# ended in a failure, gangway's node check at the full level (CUDA copies,
# the local NCCL all-reduce, an RDMA loopback write per port), so that a GPU
# or HCA that broke the job is drained (reason "gangway: ...") before the
# next job lands. After a job that succeeded it does nothing. Install it in
# the Epilog's directory (slurm.conf: Epilog=/etc/slurm/epilog.d/*) or call
# it from your Epilog script. Mind that the node stays COMPLETING while it
# runs: up to the --timeout, 40 s at most.
#
# Always exits 0: a failing Epilog makes SLURM drain the node itself, with its
# own reason.
# The batch script's status (exit:signal) and the highest of the steps'.
case "${SLURM_JOB_EXIT_CODE2:-0:0} ${SLURM_JOB_DERIVED_EC:-0}" in
  "0:0 0") exit 0 ;;
esac
${GANGWAY_BIN:-gangway} node-check --slurm --level=full --timeout=40
exit 0
