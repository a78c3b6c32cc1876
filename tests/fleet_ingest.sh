#!/bin/bash
# gangway fleet ingest on a spool as a site has it (root's, mode 1733): good
# reports of users' jobs and of root's node checks are stored, each once; a
# report found again is a no-op; a bad file (not JSON, a newer schema, over
# the size limit, a symbolic link, a FIFO) is set aside in rejected/ with one
# line and never stops the ingest; what a report is comes from its kind and
# who vouches for it from the file's owner, never its content; a user's directory planted at work/ stops the ingest
# with one line; two ingests at once store every report once and lose
# none; a user cannot run it; `fleet show` lists the nodes. And the
# ingest's own identities and limits: a name of 250 characters, hard links,
# write bits, a report dated 2100, names with control characters, a directory
# that cannot take its name in rejected/, the per-user caps, a 2,048-node job.
set -u
. "$(dirname "$0")/lib/script_env.sh"
SYNTH=$top_srcdir/bench/fleet_synth.py
test_needs_root "chown of the spool's files"
test_workdir fleet
chmod 755 "$W"
S=$W/spool DB=$W/fleet.db
mkdir -m 1733 "$S"
ingest() { "$GW" fleet ingest --spool "$S" --db "$DB" "$@" >"$W/out" 2>"$W/err"; rc=$?; out=$(cat "$W/out"); err=$(cat "$W/err"); }
q() { $PY -c 'import sqlite3,sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$DB" "$1"; }

# 1. Reports of users' jobs (nobody's) and root's node checks, and bad files.
$PY "$SYNTH" job "$W/gen" 6 4 1 && $PY "$SYNTH" node "$W/gen" 3 2 || { echo "FAIL: the synthetic reports"; exit 1; }
cp "$W"/gen/*.json "$S"/
chown 65534 "$S"/job-*.json
# A user's file that says it is a node check: it stays the user's word.
node=$(ls "$W"/gen/node-*.json | head -1)
cp "$node" "$S/forged.json"; chown 65534 "$S/forged.json"
echo '{"kind": "gangway-job-check", "schema": 2, "id": ' >"$S/broken.json"
echo '{"kind": "gangway-job-check", "schema": 9}' >"$S/newer.json"
truncate -s 65M "$S/huge.json"
ln -s /etc/passwd "$S/link.json"
mkfifo "$S/fifo.json"
chown 65534 "$S"/broken.json "$S"/newer.json "$S"/huge.json "$S"/fifo.json
: >"$S/.writing.json.tmp.123.00"   # a writer's private name: left alone
ingest
rejected=$(grep -c '^gangway fleet ingest: rejected ' <<<"$err")
if [ $rc = 0 ] && grep -q "^gangway fleet ingest: 10 stored, 0 already there, 5 rejected" <<<"$out" && [ "$rejected" = 5 ] \
   && grep -q 'rejected broken.json (uid 65534): the report is not valid JSON' <<<"$err" \
   && grep -q 'rejected newer.json (uid 65534): .*schema is 9' <<<"$err" \
   && grep -q 'rejected huge.json (uid 65534): 68157440 bytes, over the limit' <<<"$err" \
   && grep -q 'rejected link.json (uid 0): a symbolic link' <<<"$err" \
   && grep -q 'rejected fifo.json (uid 65534): not a regular file' <<<"$err"; then
  pass "10 good reports stored; 5 bad files rejected with one line each, the ingest went on"
else fail "first ingest: rc=$rc out=$out err=$err"; fi
left=$(cd "$S" && ls -A | sort | tr '\n' ' ')
[ "$left" = ".writing.json.tmp.123.00 rejected work " ] && [ -z "$(ls -A "$S/work")" ] \
  && [ "$(ls "$S/rejected" | wc -l)" = 5 ] && [ "$(stat -c %a "$S/rejected")" = 700 ] \
  && pass "the spool is empty but for a file still being written; the bad ones wait in rejected/ (0700)" \
  || fail "spool after the ingest: $left / work: $(ls -A "$S/work") / rejected: $(ls "$S/rejected")"
src=$(q "select source || ':' || uid || ':' || count(*) from checks group by source, uid order by 1" | tr '\n' ' ')
[ "$src" = "job_check:65534:6 node_check:0:3 node_check:65534:1 " ] \
  && pass "what a report is comes from its kind, who vouches for it from its owner: uid 65534's 6 job checks and its node check, root's 3 node checks" \
  || fail "sources: $src"
# Schema 2 (issue 34): a node's figures of a day are one row's blob of 24-byte points, named by `series`.
figs=$(q "select sum(length(data)) / 24 from points")
[ "$(q "select count(distinct node) from series where metric = 'link_bandwidth'")" -ge 4 ] && [ "$figs" -gt 300 ] \
  && pass "per-node, per-device and per-pair figures stored ($figs)" || fail "figures: $figs"
[ "$(stat -c %a "$DB")" = 640 ] && [ "$(q 'pragma journal_mode')" = wal ] && pass "the store is 0640 and in WAL mode" \
  || fail "store mode $(stat -c %a "$DB"), journal $(q 'pragma journal_mode')"

# 2. The same reports again: each is the check already stored.
cp "$W"/gen/*.json "$S"/; chown 65534 "$S"/job-*.json
ingest
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 0 stored, 9 already there, 0 rejected" <<<"$out" \
  && [ "$(q 'select count(*) from checks')" = 10 ] && pass "ingesting the same reports again stores nothing new" \
  || fail "re-ingest: rc=$rc $out $err"

# 3. Two ingests at once over 200 reports: each stored once, none lost, none left.
$PY "$SYNTH" node "$W/many" 200 7
cp "$W"/many/*.json "$S"/
"$GW" fleet ingest --spool "$S" --db "$DB" >"$W/a" 2>&1 & pa=$!
"$GW" fleet ingest --spool "$S" --db "$DB" >"$W/b" 2>&1 & pb=$!
wait $pa; ra=$?; wait $pb; rb=$?
sa=$(sed -n 's/^gangway fleet ingest: \([0-9]*\) stored.*/\1/p' "$W/a") sb=$(sed -n 's/^gangway fleet ingest: \([0-9]*\) stored.*/\1/p' "$W/b")
n=$(q 'select count(*) from checks')
if [ $ra = 0 ] && [ $rb = 0 ] && [ $((sa + sb)) = 200 ] && [ "$n" = 210 ] \
   && [ "$(cd "$S" && ls | tr '\n' ' ')" = "rejected work " ] && [ -z "$(ls -A "$S/work")" ]; then
  pass "two ingests at once: $sa + $sb stored, 210 checks in all, nothing left in the spool"
else fail "concurrent: ra=$ra rb=$rb sa=$sa sb=$sb checks=$n spool=$(ls -A "$S") a=$(cat "$W/a") b=$(cat "$W/b")"; fi

# 4. A claim left by an ingest that died is taken over by the next.
cp "$(ls "$W"/many/*.json | head -1)" "$S/work/999999999.leftover.json"
$PY "$SYNTH" node "$W/late" 1 99 && cp "$W"/late/*.json "$S/work/999999999.$(basename "$W"/late/*.json)"
ingest
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 1 stored, 1 already there" <<<"$out" && [ -z "$(ls -A "$S/work")" ] \
  && pass "a dead ingest's claims are taken over: 1 new, 1 already there" || fail "leftovers: rc=$rc $out $err $(ls -A "$S/work")"

# 5. A user's directory planted at work/: one line, nothing read.
S2=$W/spool2; mkdir -m 1733 "$S2"; mkdir "$S2/work"; chown 65534 "$S2/work"
"$GW" fleet ingest --spool "$S2" --db "$DB" >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q "work is not a directory of this user's" "$W/err" \
  && pass "a planted work/ stops the ingest with one line" || fail "planted work/: rc=$rc $(cat "$W/err")"
S3=$W/spool3; mkdir -m 0777 "$S3"
"$GW" fleet ingest --spool "$S3" --db "$DB" >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 1 ] && grep -q "chmod 1733" "$W/err" && pass "a spool open to all without the sticky bit is refused: $(cat "$W/err")" \
  || fail "0777 spool: rc=$rc $(cat "$W/err")"

# 6. Not root: one line.
setpriv --reuid=65534 --regid=65534 --clear-groups "$GW" fleet ingest --spool "$S" --db "$W/user.db" >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q "run it as root" "$W/err" && [ ! -e "$W/user.db" ] \
  && pass "a user's ingest: one line, exit 1, no store made" || fail "user ingest: rc=$rc $(cat "$W/err")"

# 7. fleet show: a row per node and kind of figure.
"$GW" fleet show --db "$DB" --days 3 gpu00000 >"$W/out" 2>"$W/err"; rc=$?
if [ $rc = 0 ] && grep -q '^gpu00000 *tcp_send ' "$W/out" && grep -q '^gpu00000 *gpu_h2d .* GB/s *8 ' "$W/out" \
   && grep -q '^gpu00000 *port_rate *400.00 Gb/s' "$W/out" && ! grep -qv '^NODE\|^gpu00000 ' "$W/out"; then
  pass "fleet show NODE: its figures, the last check's median, GB/s and Gb/s"
else fail "show: rc=$rc $(cat "$W/out" "$W/err")"; fi
"$GW" fleet show --db "$W/none.db" >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 1 ] && grep -q "gangway fleet ingest" "$W/err" && [ ! -e "$W/none.db" ] \
  && pass "fleet show without a store: one line, nothing created" || fail "show no db: rc=$rc $(cat "$W/err")"
# 8. The ingest's own identities and limits (issue 31, items 4, 5, 8, 10, 11).
# Each case in a spool of its own, so that one that fails cannot hide the next.
DB4=$W/fleet4.db
spool() { S4=$W/spool4-$1; mkdir -m 1733 "$S4"; }
spool long
ingest4() { "$GW" fleet ingest --spool "$S4" --db "$DB4" "$@" >"$W/out" 2>"$W/err"; rc=$?; out=$(cat "$W/out"); err=$(cat "$W/err"); }
q4() { $PY -c 'import sqlite3,sys; print("\n".join("|".join(map(str, r)) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$DB4" "$1"; }
rm -rf "$W/gen4"; $PY "$SYNTH" job "$W/gen4" 3 4 7 >/dev/null
set -- "$W"/gen4/*.json
long=$(printf 'x%.0s' $(seq 250)).json   # 255 characters: "PID." + it is over NAME_MAX
: >"$S4/$long"; cp "$1" "$S4/good.json"; chown 65534 "$S4/$long" "$S4/good.json"
ingest4
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 1 stored, 0 already there, 1 rejected" <<<"$out" \
  && grep -q "rejected xxxxxxxx.* (uid 65534): the report is not valid JSON" <<<"$err" && [ -z "$(ls -A "$S4/work")" ] \
  && [ -e "$S4/rejected/$long" ] \
  && pass "a file of a 255-character name is one rejected file; another user's report is stored" \
  || fail "long name: rc=$rc out=$out err=$err work=$(ls -A "$S4/work")"
# Hard links and group/other write bits: the owner need not be the writer.
spool links
cp "$2" "$W/shared.json"; chmod 666 "$W/shared.json"   # root's, writable by all, on the spool's file system
ln "$W/shared.json" "$S4/linked.json"
cp "$2" "$S4/groupw.json"; chown 65534 "$S4/groupw.json"; chmod 620 "$S4/groupw.json"
ingest4
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 0 stored, 0 already there, 2 rejected" <<<"$out" \
  && grep -q "rejected linked.json (uid 0): 2 hard links to it" <<<"$err" \
  && grep -q "rejected groupw.json (uid 65534): mode 0620: others than its owner may write it" <<<"$err" \
  && [ "$(q4 "select count(*) from checks where uid = 0")" = 0 ] \
  && pass "a hard-linked file and a group-writable one are refused before they are read; nothing is root's" \
  || fail "links: rc=$rc out=$out err=$err"
# A report dated 2100 (item 5): refused; and a row from the future already in a store is no node's latest.
spool future
$PY - "$3" "$S4/future.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1])); r["time"] = 4102444800; r["id"] += "-future"
json.dump(r, open(sys.argv[2], "w"))
PYEOF
chown 65534 "$S4/future.json"
ingest4
[ $rc = 0 ] && grep -q "rejected future.json (uid 65534): the report's time 4102444800 is .* s ahead of this host's clock" <<<"$err" \
  && pass "a report dated 2100 is refused" || fail "future: rc=$rc out=$out err=$err"
cp "$1" "$S4/now.json"; chown 65534 "$S4/now.json"; ingest4   # a store with figures of today, whatever came before
# Rows of 2100-01-01 (4102444800), each point at the day's very start: the store's rows copied, the
# seconds into the day (bytes 16-19 of a point, bit 31 the job-check mark) cleared.
$PY - "$DB4" <<'PYEOF'
import sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
for node, data in db.execute("select node, data from points limit 50").fetchall():
    pts = [bytearray(data[i:i + 24]) for i in range(0, len(data) - 23, 24)]
    for p in pts:
        p[16:20] = struct.pack("<I", struct.unpack("<I", bytes(p[16:20]))[0] & 0x80000000)
    db.execute("insert or replace into points(node, day, folded, data) values(?, 4102444800, 0, ?)", (node, b"".join(pts)))
db.commit()
PYEOF
"$GW" fleet metrics --db "$DB4" >"$W/metrics" 2>"$W/err"; rc=$?
[ $rc = 0 ] && grep -q '^gangway_node_last_check_timestamp_seconds' "$W/metrics" && ! grep -q '4102444800' "$W/metrics" \
  && pass "rows dated 2100 already in a store are nobody's latest figure" \
  || fail "future rows: rc=$rc $(grep -m3 4102444800 "$W/metrics") $(cat "$W/err")"
# A name with a newline and an escape sequence (item 11): one line, no control character.
spool evil
evil=$'evil\n(uid 0): forged\e[2K.json'
echo 'not json' >"$S4/$evil"; chown 65534 "$S4/$evil"
ingest4
[ $rc = 0 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q 'rejected evil?(uid 0): forged?\[2K.json (uid 65534): ' "$W/err" \
  && ! grep -q $'\e' "$W/err" \
  && pass "a file name with a newline and ESC is one line in the log, as '?'" || fail "evil name: $(cat -A "$W/err")"
# A directory that cannot go to rejected/ under its name (one not empty is there): set aside under the claim's.
spool dir
mkdir -p "$S4/rejected/dir.json/old" "$S4/dir.json/inside"; chown -R 65534 "$S4/dir.json"
ingest4
[ $rc = 0 ] && grep -q "rejected dir.json (uid 65534): not a regular file; set aside in $S4/rejected/claim-" <<<"$err" \
  && [ -z "$(ls -A "$S4/work")" ] && pass "a directory that cannot take its name in rejected/ is set aside under another" \
  || fail "dir: rc=$rc out=$out err=$err work=$(ls -A "$S4/work")"
# Per-user caps (item 8): a user's second report over --user-caps is refused; root's are not counted.
spool caps
rm -rf "$W/gen5"; $PY "$SYNTH" job "$W/gen5" 2 6 11 >/dev/null
cp "$W"/gen5/*.json "$S4"/; chown 65534 "$S4"/job-*.json
ingest4 --user-caps 8,1000000,1000000
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 1 stored, 0 already there, 1 rejected" <<<"$out" \
  && grep -q "(uid 65534): uid 65534's reports in this ingest would have 1[0-2] nodes, over the limit of 8 a user" <<<"$err" \
  && pass "a user's reports over --user-caps: the one that crosses it is refused" || fail "user caps: rc=$rc out=$out err=$err"
"$GW" fleet ingest --spool "$S4" --db "$DB4" --report-caps 1,2 >"$W/out" 2>"$W/err"; rc=$?
[ $rc = 2 ] && grep -q "report-caps wants NODES,FIGURES,FINDINGS" "$W/err" && pass "--report-caps: a bad value is a usage error" \
  || fail "report-caps usage: rc=$rc $(cat "$W/err")"
# An admin's burn-in job (issue 34, item 4): a job check that root vouches
# for, counted as a job check, and root's word in the trend (uid 0).
spool admin
cp "$1" "$S4/burnin.json"
ingest4
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 1 stored" <<<"$out" \
  && [ "$(q4 "select source || ':' || uid from checks where id like 'u0-%'")" = "job_check:0" ] \
  && "$GW" fleet metrics --db "$DB4" | grep -q '^gangway_checks_total{source="job_check"} ' \
  && pass "root's job check is a job check (uid 0), not a node check" || fail "admin job check: rc=$rc out=$out err=$err $(q4 "select id, source, uid from checks")"
# The defaults hold a 2,048-node site: a job check of all 2,048 nodes and its links.
spool site
rm -rf "$W/gen6"; $PY "$SYNTH" job "$W/gen6" 1 2048 5 >/dev/null
cp "$W"/gen6/*.json "$S4"/; chown 65534 "$S4"/job-*.json
ingest4
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 1 stored, 0 already there, 0 rejected" <<<"$out" \
  && pass "a 2,048-node job check is within the default caps" || fail "2048: rc=$rc out=$out err=$err"
# A user's reports name only the site's nodes, as SLURM lists them (here
# --nodes-from a slurm.conf): a name the list lacks refuses the file, one
# line per name (at most 16 an ingest, then a count); root's are not checked.
spool names
DB4=$W/names.db
printf 'NodeName=DEFAULT CPUs=64\nNodeName=gpu[00000-00003] CPUs=64\n' >"$W/slurm.conf"
rm -rf "$W/gen7"; $PY "$SYNTH" job "$W/gen7" 2 4 13 >/dev/null   # gpu00000-3, then gpu00007-10
set -- "$W"/gen7/*.json
cp "$1" "$S4/ours.json"; cp "$2" "$S4/theirs.json"; cp "$2" "$S4/roots.json"; cp "$W"/gen6/*.json "$S4/fake2048.json"
chown 65534 "$S4/ours.json" "$S4/theirs.json" "$S4/fake2048.json"
ingest4 --nodes-from "$W/slurm.conf"
nl=$(grep -c "^gangway fleet ingest: not in SLURM's node list ($W/slurm.conf): " <<<"$err")
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 2 stored, 0 already there, 2 rejected" <<<"$out" \
  && grep -q "rejected theirs.json (uid 65534): names 4 nodes that SLURM's node list ($W/slurm.conf) does not have, \"gpu00007\" first" <<<"$err" \
  && grep -q "rejected fake2048.json (uid 65534): names 2044 nodes that SLURM's node list" <<<"$err" \
  && grep -q "not in SLURM's node list ($W/slurm.conf): gpu00004 (in fake2048.json, uid 65534)$" <<<"$err" \
  && [ "$nl" = 16 ] && grep -q "^gangway fleet ingest: and 2028 more names not in SLURM's node list$" <<<"$err" \
  && [ -z "$(q4 "select 1 from series where node = 'gpu01000'")" ] \
  && pass "a user's report naming nodes SLURM does not list is refused, one line a name (16, then a count); root's is stored" \
  || fail "node names: rc=$rc out=$out err=$(head -c 3000 <<<"$err")"
# When no list can be read: stored, with one NOTE line.
spool unlisted
cp "$2" "$S4/again.json"; chown 65534 "$S4/again.json"
GANGWAY_SCONTROL=/bin/false SLURM_CONF=$W/no-slurm.conf ingest4
[ $rc = 0 ] && grep -q "^gangway fleet ingest: 1 stored" <<<"$out" \
  && [ "$(grep -c '^gangway fleet ingest: NOTE: ' <<<"$err")" = 1 ] \
  && grep -q "NOTE: users' reports were stored without their node names checked: SLURM's node list could not be read (scontrol -o show node failed (exit 1).*no-slurm.conf: cannot read it)" <<<"$err" \
  && pass "no node list to read: the user's report is stored, with one NOTE line" || fail "no list: rc=$rc out=$out err=$err"
# What a user adds to the store is capped across ingests (--user-series), not per ingest:
# one report each time, the third would cross 300 series and is refused whole.
spool series
DB4=$W/series.db
rm -rf "$W/gen8"; $PY "$SYNTH" job "$W/gen8" 3 4 17 >/dev/null   # 4 nodes of their own each
added() { q4 "select coalesce(sum(added), 0) from user_series where uid = 65534"; }
res=""
for f in "$W"/gen8/*.json; do
  cp "$f" "$S4/"; chown 65534 "$S4/$(basename "$f")"
  ingest4 --user-series 300 --nodes-from none
  res="$res $(sed -n 's/^gangway fleet ingest: \([0-9]*\) stored.*\([0-9]\) rejected.*/\1:\2/p' <<<"$out")/$(added)"
done
[ "$res" = " 1:0/116 1:0/232 0:1/232" ] \
  && grep -q "(uid 65534): uid 65534's reports added 232 series to the store in the last 90 days, and this one adds more than the 68 left of the limit of 300 a user (fleet ingest --user-series)" <<<"$err" \
  && [ "$(q4 "select count(*) from series")" = 232 ] \
  && pass "a user's new series are capped across ingests (--user-series); the report over it adds nothing" \
  || fail "user series: $res rc=$rc out=$out err=$err series=$(q4 "select count(*) from series")"
finish
