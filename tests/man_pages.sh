#!/bin/bash
# The man pages render without warnings, each names the others in SEE ALSO, and
# gangway.so(8) names every site key, option and variable. Which page documents
# each command's options: tests/man_options.sh.
set -u
: "${top_srcdir:=.}"
fail=0
command -v man >/dev/null || { echo "FAIL: man is not installed (apt-get install man-db)"; exit 1; }
pages=("$top_srcdir"/man/*.[1-8])
# Every page of man/ (by audience, issue 32 item 7); fewer would mean a page was lost.
[ ${#pages[@]} -ge 6 ] || { echo "FAIL: ${#pages[@]} man pages in $top_srcdir/man, want 6 or more"; fail=1; }
for page in "${pages[@]}"; do
  warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
  if [ -n "$warn" ]; then echo "FAIL: $page: $warn"; fail=1; else echo "ok: $page renders without warnings"; fi
  see_also=$(sed -n '/^\.SH SEE ALSO/,/^\.SH /p' "$page" | sed 's/\\-/-/g')
  for other in "${pages[@]}"; do
    [ "$other" = "$page" ] && continue
    name=${other##*/} && name=${name%.*} sect=${other##*.}
    grep -qE "^\.BR $name \($sect\)" <<<"$see_also" || { echo "FAIL: ${page##*/}: SEE ALSO does not name $name($sect)"; fail=1; }
  done
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
# node-check.conf(5) names every key of the node check's site file, as the command itself lists them for an unknown key.
if [ -n "${GANGWAY_BIN:-}" ] && [ -x "$GANGWAY_BIN" ]; then
  conf_text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -E UTF-8 -l "$top_srcdir/man/node-check.conf.5" 2>/dev/null)
  t=$(mktemp) && echo "no_such_key=1" >"$t"
  nkeys=$("$GANGWAY_BIN" node-check --config="$t" 2>&1 | sed -n 's/.*; the keys are //p' | tr -d ',')
  rm -f "$t"
  [ -n "$nkeys" ] || { echo "FAIL: gangway node-check did not list its site keys"; fail=1; }
  for k in $nkeys; do grep -q -- "$k=" <<<"$conf_text" || { echo "FAIL: node-check.conf(5) does not document $k="; fail=1; }; done
  [ $fail = 0 ] && echo "ok: node-check.conf(5) documents the node check's $(wc -w <<<"$nkeys") site keys"
fi
exit $fail
