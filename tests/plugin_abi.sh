#!/bin/bash
# The plugin exports exactly what SLURM looks up, and links no libslurm.
# C++ gives SPANK_PLUGIN()'s const objects internal linkage unless declared
# extern "C"; SLURM then refuses the plugin as "not a Slurm plugin".
set -u
so=${GANGWAY_PLUGIN:?}
fail=0
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDRB]$/ {print $3}' | sort)
for sym in plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init slurm_spank_task_init; do
  grep -qx "$sym" <<<"$exported" || { echo "FAIL: $sym is not exported by $so"; fail=1; }
done
extra=$(grep -vE '^(plugin_(name|type|version)|spank_plugin_version|slurm_spank_.*)$' <<<"$exported")
[ -z "$extra" ] || { echo "FAIL: exports more than SLURM needs:"; echo "$extra"; fail=1; }
if ldd "$so" | grep -q libslurm; then echo "FAIL: $so links libslurm"; fail=1; fi
strings -a "$so" | grep -qx spank || { echo "FAIL: no \"spank\" plugin_type string"; fail=1; }
[ $fail = 0 ] && echo "ok: $(wc -l <<<"$exported") symbols exported, no libslurm"
exit $fail
