#!/bin/bash
# Every option has exactly one home among the man pages (issue 32, item 7).
#
# The options: each command of `gangway help`, and the options its
# `gangway CMD --help` (and, for fleet, each `gangway fleet SUB --help` that
# exits 0; for another command, each `gangway CMD SUB --help` of a sub-command
# its page's SYNOPSIS names) names on its usage lines: a line that starts, after blanks, with
# "usage:", "gangway ", "[" or a lower-case word followed by " [" or " --"
# (fleet's sub-commands), all its options; a line that starts with an option,
# that option. An option named in the prose ("lstopo --of xml", "srun
# --mpi=pmix") is not one. gangway's own --help and --version go with its help and
# version commands. The plugin's --gangway* options (spank/options.cpp's
# k*Name strings) and plugstack keys (lib/env/config.cpp's kKnownKeys) belong
# to gangway.so(8); node-check.conf's keys (as `gangway node-check` lists them
# for an unknown key) to node-check.conf(5).
#
# The home of a command is the one page whose SYNOPSIS has a line starting
# `gangway CMD` (exactly one page must). An option entry is a tag line, the
# line after `.TP`, with the font escapes, quotes and `\-` undone; it names an
# option when the option occurs in it as a whole word (--json is not
# --json-file), a key when "key=" occurs in it not after a letter, digit, "_"
# or "-". The rule: each option (and key) has an entry in its owner's page,
# and no page has an entry for an option or known key unless it owns a command
# (or file) that has it. So an option documented in two pages fails, as does
# one in none, or one left behind after its command moved or dropped it. Two
# commands may share an option name (topo's and node-check's --json): each is
# then documented once, in its own command's page.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
bin=${GANGWAY_BIN:?GANGWAY_BIN names the built gangway}
[ -x "$bin" ] || { echo "FAIL: $bin is not a built gangway"; exit 1; }
fail=0
pages=("$top_srcdir"/man/*.[1-8])

# tags PAGE: each option entry's tag line, plain text.
tags() {
  awk 'prev == ".TP" && !/^\.\\"/ { print } { prev = $0 }' "$1" |
    sed -E 's/\\f[BIRP]//g; s/\\f\(..//g; s/\\-/-/g; s/\\&//g; s/"//g; s/^\.[A-Z]+ //'
}
# synopsis PAGE: its SYNOPSIS section, plain text.
synopsis() {
  awk '/^\.SH / { on = ($2 == "SYNOPSIS") ; next } on' "$1" | sed -E 's/\\f[BIRP]//g; s/\\-/-/g; s/"//g; s/^\.[A-Z]+ //'
}
# usage_options: the options on the usage lines of a usage text on stdin: all
# of a synopsis line's, the first of an option's line ("--topology FILE  an
# hwloc XML (lstopo --of xml)" is --topology's).
usage_options() {
  sed -nE 's/^[[:space:]]*(--[a-z][a-z0-9-]*).*/\1/p; /^[[:space:]]*(usage:|gangway |\[|[a-z][a-z-]* (\[|--))/p' |
    grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- --help
}

# expected: "OWNER-PAGE<TAB>what<TAB>option or key=" lines.
expected=$(mktemp) entries=$(mktemp)
trap 'rm -f "$expected" "$entries"' EXIT

cmds=$("$bin" help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$cmds" ] || { echo "FAIL: \`$bin help\` listed no commands"; exit 1; }
for c in $cmds; do
  owners=()
  for p in "${pages[@]}"; do synopsis "$p" | grep -qE "^gangway $c( |$)" && owners+=("$p"); done
  if [ ${#owners[@]} != 1 ]; then
    echo "FAIL: the command $c is in the SYNOPSIS of ${#owners[@]} pages (${owners[*]##*/}); it must be in exactly one"
    fail=1; continue
  fi
  home=${owners[0]}
  case $c in
    help) opts=--help ;;
    version) opts=--version ;;
    *) opts=$("$bin" "$c" --help 2>&1 | usage_options)
       if [ "$c" = fleet ]; then
         for s in $("$bin" fleet --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p'); do
           sub=$("$bin" fleet "$s" --help 2>&1) && opts+=$'\n'$(usage_options <<<"$sub")
         done
       else
         # Another command's sub-commands (postmortem collect, send): those its page's
         # SYNOPSIS names, `gangway CMD SUB`, each with a --help of its own.
         for s in $(synopsis "$home" | sed -nE "s/^gangway $c ([a-z][a-z-]*)( .*)?\$/\1/p" | sort -u); do
           sub=$("$bin" "$c" "$s" --help 2>&1) && opts+=$'\n'$(usage_options <<<"$sub")
         done
       fi ;;
  esac
  for o in $(sort -u <<<"$opts"); do printf '%s\t%s\t%s\n' "$home" "gangway $c" "$o"; done >>"$expected"
done

plugin=$top_srcdir/man/gangway.so.8 conf=$top_srcdir/man/node-check.conf.5
popts=$(grep -oE 'k[A-Za-z]+Name\[\] = "[a-z-]+"' "$top_srcdir/spank/options.cpp" | sed -E 's/.*"(.*)"/--\1/')
pkeys=$(grep -o 'kKnownKeys = "[^"]*"' "$top_srcdir/lib/env/config.cpp" | sed 's/.*= "//; s/"//; s/, / /g')
t=$(mktemp) && echo "no_such_key=1" >"$t"
nkeys=$("$bin" node-check --config="$t" 2>&1 | sed -n 's/.*; the keys are //p' | tr -d ',')
rm -f "$t"
# An empty list would check nothing (a file moved, a message reworded): a failure of this test.
[ -n "$popts" ] && [ -n "$pkeys" ] && [ -n "$nkeys" ] ||
  { echo "FAIL: no plugin options, plugstack keys or node-check.conf keys found (spank/options.cpp, lib/env/config.cpp, gangway node-check)"; exit 1; }
for o in $popts; do printf '%s\tthe plugin\t%s\n' "$plugin" "$o"; done >>"$expected"
for k in $pkeys; do printf '%s\tplugstack.conf\t%s=\n' "$plugin" "$k"; done >>"$expected"
for k in $nkeys; do printf '%s\tnode-check.conf\t%s=\n' "$conf" "$k"; done >>"$expected"
known_keys=$(printf '%s\n' $pkeys $nkeys | sort -u)

# entries: "PAGE<TAB>option or key=" for every option entry of every page.
for p in "${pages[@]}"; do
  tags "$p" | while IFS= read -r line; do
    grep -oE -- '--[a-z][a-z0-9-]*' <<<"$line" | sed "s|^|$p\t|"
    grep -oE -- '(^|[^a-z0-9_-])[a-z_][a-z0-9_]*=' <<<"$line" | sed -E 's/^[^a-z_]//' |
      while read -r k; do grep -qxF -- "${k%=}" <<<"$known_keys" && printf '%s\t%s\n' "$p" "$k"; done
  done
done | sort -u >"$entries"

n=0
while IFS=$'\t' read -r home what o; do
  n=$((n + 1))
  [ -f "$home" ] || { echo "FAIL: $what's $o: its page ${home##*/} does not exist"; fail=1; continue; }
  grep -qxF -- "$home"$'\t'"$o" "$entries" || { echo "FAIL: $what's $o has no option entry (.TP) in ${home##*/}"; fail=1; }
done <"$expected"
while IFS=$'\t' read -r p o; do
  awk -F'\t' -v p="$p" -v o="$o" '$1 == p && $3 == o { f = 1 } END { exit !f }' "$expected" && continue
  others=$(awk -F'\t' -v o="$o" '$3 == o { print $2 " (" $1 ")" }' "$expected" | sed 's|([^)]*/|(|' | sort -u | paste -sd, -)
  echo "FAIL: ${p##*/} has an option entry for $o, which none of its commands or files has${others:+; it belongs to $others}"
  fail=1
done <"$entries"
[ $fail = 0 ] && echo "ok: $n options and keys each have exactly one entry, in their owner's page (${#pages[@]} pages)"
exit $fail
