#!/bin/bash
# The gangway command's front door: version, help, and one clear line on misuse.
set -u
bin=${GANGWAY_BIN:?}
fail=0
check() {  # check DESCRIPTION EXPECTED_RC REGEX -- CMD...
  local what=$1 want_rc=$2 re=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$want_rc" ] || ! grep -qE -- "$re" <<<"$out"; then
    echo "FAIL: $what: rc=$rc (want $want_rc), output:"; echo "$out"; fail=1
  else
    echo "ok: $what"
  fi
}
check "version names the SLURM it was built for" 0 '^gangway [0-9]+\.[0-9]+\.[0-9]+ \(built for SLURM [0-9]+\.[0-9]+\.[0-9]+\)$' -- "$bin" --version
check "help lists env" 0 'env' -- "$bin" --help
check "no command is a usage error" 2 'usage: gangway' -- "$bin"
check "unknown command" 2 'unknown command "bogus"' -- "$bin" bogus
check "env outside a step says what to do" 3 'run it inside a job step' -- env -u GANGWAY_SET "$bin" env
check "env rejects unknown options" 2 'unknown option "--bogus"' -- "$bin" env --bogus
exit $fail
