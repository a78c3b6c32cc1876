# Sourced by the command-line tests (launcher_cli.sh, topo_cli.sh): one
# `check` for "run this, expect that exit status and output". Misuse must
# get one clear line, so a non-zero expected status also demands a single
# line of output (ONE_LINE=0 check ... for the few that print a usage text).
# Sets fail=1 on a mismatch (the caller starts it at 0).
check() {  # check DESCRIPTION EXPECTED_RC REGEX -- CMD...
  local what=$1 want_rc=$2 re=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$want_rc" ] || ! grep -qE -- "$re" <<<"$out"; then
    echo "FAIL: $what: rc=$rc (want $want_rc), output:"; echo "$out"; fail=1
  elif [ "$want_rc" != 0 ] && [ "${ONE_LINE:-1}" = 1 ] && [ "$(wc -l <<<"$out")" != 1 ]; then
    echo "FAIL: $what: want one line, got:"; echo "$out"; fail=1
  else
    echo "ok: $what"
  fi
}
