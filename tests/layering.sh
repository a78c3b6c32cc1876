#!/bin/bash
# The rooms of the tree, lowest first, and which may include which. A room is
# a folder (lib/X, lib/sys/X, spank, launcher) and belongs to one library of
# Makefile.am (issue 42: folder = library = room), whose LIBADD chain is
# core <- preflight <- health <- fleet <- postmortem; the plugin (spank) links
# core alone, the command (launcher) all of them. Checked here:
#   - the table itself: a room may name only rooms listed before it (lower), of
#     its own library or of one its library links;
#   - every source that Makefile.am puts in lib/libgangway_X.la lies in a room
#     of library X, so that no folder is split across libraries;
#   - every #include of a file in lib/, spank/ and launcher/ that names a file
#     of the tree ("..." relative to the file or to the top, as "lib/...", and
#     <...> from the top) stays in its room or goes to one its row names.
# So no cycle between rooms can come back (issue 32: preflight -> fleet ->
# preflight, from the report schema), and none of issue 42's upward edges
# (the self-check at the end names them).
#
#   room            library     may include
rooms='
base            core        -
env             core        base
slurm           core        base env
pin             core        base env
stepd           core        base
sys/node        core        base env pin
preflight       preflight   base env slurm
conf            preflight   base env preflight
sys/run         preflight   base preflight sys/node
sys/conf        preflight   base preflight conf sys/node sys/run
sys/devices     preflight   base preflight sys/node
sys/net         preflight   base preflight sys/node sys/run
sys/stages      preflight   base env pin preflight sys/node sys/run sys/devices
sys/slurm       preflight   base env slurm preflight sys/node sys/run
sys/preflight   preflight   base env slurm preflight sys/node sys/run sys/devices sys/net sys/stages sys/slurm
health          health      base env slurm preflight
sys/health      health      base env pin conf preflight health sys/node sys/run sys/conf sys/devices sys/net sys/stages sys/slurm
fleet           fleet       base env slurm preflight health
sys/fleet       fleet       base env conf fleet sys/node sys/conf sys/slurm
postmortem      postmortem  base env slurm stepd health
sys/postmortem  postmortem  base env slurm preflight health postmortem sys/node sys/run sys/devices sys/net sys/slurm sys/health sys/fleet
watch           postmortem  base env slurm stepd postmortem
sys/watch       postmortem  base env slurm stepd fleet watch sys/node sys/run sys/net sys/slurm sys/fleet sys/postmortem
spank           plugin      base env pin stepd sys/node
launcher        command     *
'
# The libraries in their LIBADD order, and the highest one each links.
libraries='core preflight health fleet postmortem'
declare -A links=([core]=core [preflight]=preflight [health]=health [fleet]=fleet [postmortem]=postmortem
                  [plugin]=core [command]=postmortem)
set -u -f  # -f: the table's * is a word, not a glob
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$top/tests/verdicts.sh"
cd "$top" || exit 1

declare -A lib_of may rank
n=0
for l in $libraries; do rank[$l]=$n; n=$((n + 1)); done
rank[plugin]=$n rank[command]=$n
declare -A seen
table_ok=1
while read -r room lib allowed; do
  [ -n "$room" ] || continue
  for to in $allowed; do
    [ "$to" = - ] || [ "$to" = '*' ] && continue
    if [ -z "${seen[$to]:-}" ]; then
      fail "the table: $room names $to, which is not a room listed before it"; table_ok=0
    elif [ "${rank[${lib_of[$to]}]}" -gt "${rank[${links[$lib]}]}" ]; then
      fail "the table: $room ($lib) names $to, of the ${lib_of[$to]} library, which $lib does not link"; table_ok=0
    fi
  done
  lib_of[$room]=$lib may[$room]=" $allowed " seen[$room]=1
done <<<"$rooms"
[ $table_ok = 1 ] && pass "the rooms' table is ordered: each room names only rooms listed before it, of libraries its own links"

room_of() {  # a path under the top -> its room ("" when it is in none)
  case $1 in
    lib/sys/*/*) local r=${1#lib/sys/}; echo "sys/${r%%/*}" ;;
    lib/*/*) local r=${1#lib/}; echo "${r%%/*}" ;;
    spank/*) echo spank ;;
    launcher/*) echo launcher ;;
  esac
}

allowed() {  # allowed FROM TO
  [ "$1" = "$2" ] && return 0
  case ${may[$1]:-} in *" * "* | *" $2 "*) return 0 ;; esac
  return 1
}

# resolve FILE INCLUDE QUOTE: the included file's path under the top, as the
# compiler finds it (AM_CPPFLAGS has -I$(top_srcdir)); "" when it is none of the
# tree's (a system header, config.h).
resolve() {
  local p
  if [ "$3" = '"' ]; then
    p=$(realpath -m --relative-to=. "$(dirname "$1")/$2")
    [ -f "$p" ] && { echo "$p"; return; }
  fi
  p=$(realpath -m --relative-to=. "$2")
  case $p in ../* | /*) return ;; esac
  [ -f "$p" ] && echo "$p"
}

# Folder = library: what Makefile.am builds into each library, room by room.
misplaced=0 listed=0
declare -A built
while read -r lib file; do
  listed=$((listed + 1)) built[$file]=1
  room=$(room_of "$file")
  if [ -z "$room" ] || [ -z "${lib_of[$room]:-}" ]; then
    fail "$file (libgangway_$lib) is in no room of tests/layering.sh's table"; misplaced=$((misplaced + 1))
  elif [ "${lib_of[$room]}" != "$lib" ]; then
    fail "$file is built into libgangway_$lib, but its room $room is the ${lib_of[$room]} library's: one folder, one library"
    misplaced=$((misplaced + 1))
  fi
done < <(awk '
  /^lib_libgangway_[a-z]+_la_SOURCES[[:space:]]*=/ {
    lib = $1; sub(/^lib_libgangway_/, "", lib); sub(/_la_SOURCES$/, "", lib); on = 1; sub(/^[^=]*=/, "") }
  on { cont = /\\[[:space:]]*$/; sub(/\\[[:space:]]*$/, "")
       n = split($0, w, /[[:space:]]+/); for (i = 1; i <= n; i++) if (w[i] != "") print lib, w[i]
       if (!cont) on = 0 }' Makefile.am)
[ "$listed" -gt 300 ] || fail "only $listed sources read from Makefile.am's libraries: the test is blind"
[ $misplaced = 0 ] && pass "each of the $listed sources of the five libraries lies in a room of its own library"
# ... and each source under lib/ is one library's (or no make dist would carry it).
unlisted=$(comm -23 <(find lib \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' \) | sort) <(printf '%s\n' "${!built[@]}" | sort))
[ -z "$unlisted" ] && pass "every source under lib/ is in one library's sources" ||
  fail "in no library's sources in Makefile.am: $(echo $unlisted)"

edges=0 bad=0
while IFS= read -r file; do
  from=$(room_of "$file")
  if [ -z "${lib_of[$from]:-}" ]; then
    fail "$file is in no room of the table"; bad=$((bad + 1)); continue
  fi
  while IFS=' ' read -r quote inc; do
    target=$(resolve "$file" "$inc" "$quote")
    [ -n "$target" ] || continue
    to=$(room_of "$target")
    [ -n "$to" ] || continue  # a file of the top outside the rooms (config.h of a build in the tree)
    edges=$((edges + 1))
    if ! allowed "$from" "$to"; then
      fail "$file includes $inc: room $from may not include room $to (tests/layering.sh lists the allowed ones)"
      bad=$((bad + 1))
    fi
  done < <(sed -n -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/" \1/p' \
                  -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/< \1/p' "$file")
done < <(find lib spank launcher \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' \) | sort)

[ "$edges" -gt 500 ] && pass "$edges includes between files read" || fail "only $edges includes read: the test is blind"
[ "$bad" = 0 ] && pass "every include follows the rooms' order"

# The self-check: the upward edges issue 42 found, which the old wildcard
# (any sys/* to any sys/*) and the skipped "lib/..." paths let pass, are
# refused, and an include is resolved each way the compiler finds it.
refused=0
for edge in 'lib/sys/stages/nvml_stage.hpp ../../health/facts.hpp' \
            'lib/sys/devices/pci_link.hpp ../../health/facts.hpp' \
            'lib/sys/run/subprocess.cpp ../net/sock.hpp' \
            'lib/sys/net/http_client.cpp ../stages/stage.hpp' \
            'lib/sys/net/http_client.cpp lib/sys/stages/stage.hpp' \
            'lib/sys/run/subprocess.cpp <lib/sys/net/sock.hpp>'; do
  set -- $edge
  inc=$2 quote='"'
  case $inc in '<'*) quote='<' inc=${inc#<} inc=${inc%>} ;; esac
  target=$(resolve "$1" "$inc" "$quote")
  if [ -z "$target" ]; then
    fail "the self-check: $1's include $2 resolves to no file"
  elif allowed "$(room_of "$1")" "$(room_of "$target")"; then
    fail "the self-check: $1 including $2 ($target) would pass"
  else
    refused=$((refused + 1))
  fi
done
[ $refused = 6 ] && pass "issue 42's four upward edges are refused, written relative, from the top and in <...>"
finish
