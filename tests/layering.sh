#!/bin/bash
# The rooms of the tree and which may include which: every #include "..." of
# a file in lib/, spank/ and launcher/ is checked against the list below, and
# any other edge fails, so that no cycle between rooms can come back (issue
# 32: preflight -> fleet -> preflight and health -> fleet -> health, from the
# report schema). The pure rooms form a chain; lib/sys is the I/O edge above
# them; spank and the launcher are the adapters on top.
#
#   base                       nothing
#   env                        base
#   slurm                      base env (SLURM's texts and states: a job's fields, a node's state)
#   pin                        base env
#   preflight                  base env slurm
#   health                     base env preflight slurm
#   fleet                      base slurm preflight health (the schema reads the checks' reports)
#   postmortem                 base env health slurm (the records and the verdict of a job's stop;
#                              the kernel log's signs read with the node check's kmsg and Xid readers)
#   sys/*                      the pure rooms and each other
#   spank                      base env pin postmortem sys/node (never preflight, health, fleet:
#                              tests/plugin_contents.sh; of postmortem, the task line and the step cgroup)
#   launcher                   everything
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$top/tests/verdicts.sh"
cd "$top" || exit 1

allowed() {  # allowed FROM TO
  case "$1:$2" in
    "$1:$1") return 0 ;;
    base:*) return 1 ;;
    env:base) return 0 ;;
    slurm:base | slurm:env) return 0 ;;
    conf:base | conf:env | stepd:base) return 0 ;;
    pin:base | pin:env) return 0 ;;
    preflight:base | preflight:env | preflight:slurm) return 0 ;;
    health:base | health:env | health:preflight | health:slurm) return 0 ;;
    fleet:base | fleet:preflight | fleet:health | fleet:slurm) return 0 ;;
    postmortem:base | postmortem:env | postmortem:health | postmortem:slurm | postmortem:stepd) return 0 ;;
    sys/*:base | sys/*:env | sys/*:conf | sys/*:slurm | sys/*:pin | sys/*:preflight | sys/*:health | sys/*:fleet | sys/*:postmortem | sys/*:sys/*) return 0 ;;
    spank:base | spank:env | spank:pin | spank:stepd | spank:sys/node) return 0 ;;
    launcher:*) return 0 ;;
  esac
  return 1
}

room_of() {  # a path under the top -> its room
  case $1 in
    lib/sys/*/*) local r=${1#lib/}; echo "${r%/*}" ;;
    lib/sys/*) echo sys/top ;;  # lib/sys/node/fd.hpp, conf_files: the edge's own shared files
    lib/*/*) local r=${1#lib/}; echo "${r%%/*}" ;;
    spank/*) echo spank ;;
    launcher/*) echo launcher ;;
    *) echo other ;;
  esac
}

edges=0 bad=0
while IFS= read -r file; do
  from=$(room_of "$file")
  dir=$(dirname "$file")
  while IFS= read -r inc; do
    target=$(realpath -m --relative-to="$top" "$dir/$inc")
    [ -e "$target" ] || continue  # a system header in quotes, or a generated one (config.h)
    to=$(room_of "$target")
    edges=$((edges + 1))
    if ! allowed "$from" "$to"; then
      fail "$file includes $inc: room $from may not include room $to (tests/layering.sh lists the allowed ones)"
      bad=$((bad + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find lib spank launcher -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' | sort)

[ "$edges" -gt 500 ] && pass "$edges includes between files read" || fail "only $edges includes read: the test is blind"
[ "$bad" = 0 ] && pass "every include follows the rooms' order (base < env < slurm, pin, preflight < health < fleet < sys < spank, launcher)"
finish
