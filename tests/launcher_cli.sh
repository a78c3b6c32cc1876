#!/bin/bash
# The gangway command's front door: version, help, and one clear line on misuse.
set -u
bin=${GANGWAY_BIN:?}
fail=0
. "$(dirname "$0")/cli_check.sh"
check "version names the SLURM it was built for" 0 '^gangway [0-9]+\.[0-9]+\.[0-9]+ \(built for SLURM [0-9]+\.[0-9]+\.[0-9]+\)$' -- "$bin" --version
check "help lists env" 0 'env' -- "$bin" --help
ONE_LINE=0 check "no command is a usage error" 2 'usage: gangway' -- "$bin"
check "unknown command" 2 'unknown command "bogus"' -- "$bin" bogus
check "env outside a step says what to do" 3 'run it inside a job step' -- env -u GANGWAY_SET "$bin" env
check "env rejects unknown options" 2 'unknown option "--bogus"' -- "$bin" env --bogus
exit $fail
