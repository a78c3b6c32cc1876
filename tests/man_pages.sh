#!/bin/bash
# The man pages render without warnings and name every site key, option and variable.
set -u
: "${top_srcdir:=.}"
fail=0
command -v man >/dev/null || { echo "FAIL: man is not installed (apt-get install man-db)"; exit 1; }
for page in "$top_srcdir/man/gangway.1" "$top_srcdir/man/gangway.so.8"; do
  warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
  if [ -n "$warn" ]; then echo "FAIL: $page: $warn"; fail=1; else echo "ok: $page renders without warnings"; fi
done
plugin_text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -E UTF-8 -l "$top_srcdir/man/gangway.so.8" 2>/dev/null)
# Every variable the plugin can set (lib/env/cluster_env.cpp's contract_names) and every site key.
names=$(sed -n '/contract_names()/,/};/p' "$top_srcdir/lib/env/cluster_env.cpp" | grep -o '"[A-Z_]*"' | tr -d '"')
keys=$(grep -o 'kKnownKeys = "[^"]*"' "$top_srcdir/lib/env/config.cpp" | sed 's/.*= "//; s/"//; s/, / /g')
# An empty list would check nothing (a file moved): that is a failure of this test.
[ -n "$names" ] && [ -n "$keys" ] || { echo "FAIL: no variable names or site keys found in lib/env/cluster_env.cpp, lib/env/config.cpp"; fail=1; }
for n in $names GANGWAY_SET GANGWAY_MODE GANGWAY_IFACE GANGWAY_PIN GANGWAY_CHECK GANGWAY_ON_FAIL GANGWAY_RANK_ORDER GANGWAY_CHECKED; do
  grep -qw -- "$n" <<<"$plugin_text" || { echo "FAIL: gangway.so(8) does not mention $n"; fail=1; }
done
for k in $keys; do grep -q -- "$k=" <<<"$plugin_text" || { echo "FAIL: gangway.so(8) does not document site key $k"; fail=1; }; done
for o in --gangway= --gangway-iface= --gangway-pin= --gangway-check --gangway-on-fail= --gangway-rank-order=; do grep -q -- "$o" <<<"$plugin_text" || { echo "FAIL: gangway.so(8) lacks $o"; fail=1; }; done
[ $fail = 0 ] && echo "ok: gangway.so(8) covers $(wc -w <<<"$names") variables and the keys: $keys"
# gangway(1) names every command of `gangway help` and every option of each `gangway CMD --help`.
if [ -n "${GANGWAY_BIN:-}" ] && [ -x "$GANGWAY_BIN" ]; then
  cmd_text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -E UTF-8 -l "$top_srcdir/man/gangway.1" 2>/dev/null)
  cmds=$("$GANGWAY_BIN" help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' | grep -vx help)
  nopts=0
  for c in $cmds; do
    grep -qw -- "$c" <<<"$cmd_text" || { echo "FAIL: gangway(1) does not document the command $c"; fail=1; }
    [ "$c" = version ] && continue
    for o in $("$GANGWAY_BIN" "$c" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- --help | sort -u); do
      nopts=$((nopts + 1))
      grep -q -- "$o" <<<"$cmd_text" || { echo "FAIL: gangway(1) does not document $c $o"; fail=1; }
    done
  done
  [ $fail = 0 ] && echo "ok: gangway(1) covers the commands" $cmds "and their $nopts options"
  # Every key of the node check's site file, as the command itself lists them for an unknown key.
  t=$(mktemp) && echo "no_such_key=1" >"$t"
  nkeys=$("$GANGWAY_BIN" node-check --config="$t" 2>&1 | sed -n 's/.*; the keys are //p' | tr -d ',')
  rm -f "$t"
  [ -n "$nkeys" ] || { echo "FAIL: gangway node-check did not list its site keys"; fail=1; }
  for k in $nkeys; do grep -q -- "$k=" <<<"$cmd_text" || { echo "FAIL: gangway(1) does not document node-check.conf's $k="; fail=1; }; done
  [ $fail = 0 ] && echo "ok: gangway(1) documents the node check's $(wc -w <<<"$nkeys") site keys"
fi
exit $fail
