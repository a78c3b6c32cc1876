#!/bin/bash
# A SIF image holding python3, PyTorch and a shell for tests/integration/apptainer.sh,
# made locally (no registry) from the files of the Debian packages that
# python3-torch needs, as installed in the root this runs in (sid's:
# contrib/dev/root.sh run sid -- contrib/dev/torch-sif.sh). Prints the image's
# path.
#
# The image is cached as /var/tmp/gangway-sif/torch-KEY.sif, KEY a hash of this
# script and the packages' names and versions: made once per root (a remade
# root, or a new torch, makes a new one; older ones are removed). The tree is
# hard links into the root (no copy) and the squashfs is uncompressed: made in
# 8 s here against lz4's 11 s (1000 MiB against 467; BENCHMARKS.md), and no
# task spends CPU decompressing it.
#
# Exit status: 0 and the path on stdout; 1 with one line on stderr otherwise.
set -euo pipefail
prog=contrib/dev/torch-sif.sh
die() { echo "$prog: $*" >&2; exit 1; }
command -v apptainer >/dev/null || die "apptainer is not installed here (the sid root has it: contrib/dev/root.sh)"
command -v mksquashfs >/dev/null || die "mksquashfs is not installed here (squashfs-tools)"
dpkg-query -W -f='${db:Status-Abbrev}' python3-torch 2>/dev/null | grep -q '^ii' || die "python3-torch is not installed here"
cache=/var/tmp/gangway-sif

# tree.py closure: the installed dependency closure of python3,
# python3-torch, dash and coreutils (Depends and Pre-Depends; the first installed choice of an
# alternative; a virtual package by its installed provider), as "name version"
# lines. tree.py link DIR: those packages' files (no documentation) as hard
# links under DIR. Python, not a shell loop: 15,000 files.
tree_py=$(cat <<'PY'
import os, re, shutil, sys
def paragraphs():
    with open("/var/lib/dpkg/status", encoding="utf-8") as f:
        for block in f.read().split("\n\n"):
            fields, last = {}, None
            for line in block.splitlines():
                if line[:1] in (" ", "\t") and last:
                    fields[last] += "\n" + line
                elif ":" in line:
                    last, _, v = line.partition(":")
                    fields[last] = v.strip()
            if fields.get("Status", "").endswith(" installed"):
                yield fields
pkgs, provides = {}, {}
for p in paragraphs():
    name = p["Package"]
    if p.get("Architecture") not in ("all", None) and name in pkgs and pkgs[name].get("Architecture") == "all":
        continue
    pkgs[name] = p
    for v in p.get("Provides", "").split(","):
        v = re.sub(r"\(.*\)", "", v).strip()
        if v:
            provides.setdefault(v, name)
def deps(p):
    text = p.get("Depends", "") + "," + p.get("Pre-Depends", "")
    for alt in text.split(","):
        for a in alt.split("|"):
            a = re.sub(r"\(.*\)|\[.*\]|:any", "", a).strip()
            if not a:
                continue
            if a in pkgs:
                yield a; break
            if a in provides:
                yield provides[a]; break
seen, todo = set(), ["python3", "python3-torch", "dash", "coreutils"]  # sh, sleep: the test's commands
while todo:
    n = todo.pop()
    if n in seen: continue
    seen.add(n)
    todo.extend(deps(pkgs[n]))
if sys.argv[1] == "closure":
    for n in sorted(seen):
        print(n, pkgs[n]["Version"])
    sys.exit(0)
dest = sys.argv[2]
files = set()
for n in seen:
    arch = pkgs[n].get("Architecture")
    for lst in ("/var/lib/dpkg/info/%s.list" % n, "/var/lib/dpkg/info/%s:%s.list" % (n, arch)):
        if os.path.exists(lst):
            with open(lst, encoding="utf-8") as f:
                files.update(l.rstrip("\n") for l in f)
skip = re.compile(r"^/usr/share/(doc|man|info|locale)/")
for f in sorted(files):
    if skip.match(f) or f in ("/.", ""):
        continue
    d = dest + f
    if os.path.islink(f):
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if not os.path.lexists(d): os.symlink(os.readlink(f), d)
    elif os.path.isfile(f):
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if not os.path.lexists(d):
            try: os.link(f, d)
            except OSError: shutil.copy2(f, d)
    elif os.path.isdir(f):
        os.makedirs(d, exist_ok=True)
# update-alternatives' links (libblas.so.3, ...) are no package's files: each
# link whose chosen file is in the tree, with its /etc/alternatives step.
adir = "/var/lib/dpkg/alternatives"
for name in sorted(os.listdir(adir)):
    with open(os.path.join(adir, name), encoding="utf-8") as f:
        lines = f.read().split("\n")
    pairs = [(name, lines[1])]
    i = 2
    while i + 1 < len(lines) and lines[i]:
        pairs.append((lines[i], lines[i + 1])); i += 2
    for alt, link in pairs:
        step = "/etc/alternatives/" + alt
        if not os.path.islink(step) or not os.path.lexists(dest + os.path.realpath(step)):
            continue
        for path, target in ((step, os.readlink(step)), (link, step)):
            os.makedirs(os.path.dirname(dest + path), exist_ok=True)
            if not os.path.lexists(dest + path): os.symlink(target, dest + path)
PY
)
closure=$(python3 -c "$tree_py" closure)
key=$( { sha256sum <"$0"; echo "$closure"; } | sha256sum | cut -c1-16)
img=$cache/torch-$key.sif
[ -s "$img" ] && { echo "$img"; exit 0; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
[ -s "$img" ] && { echo "$img"; exit 0; }
t0=$SECONDS
tree=$(mktemp -d "$cache/.tree.XXXXXX")
trap 'rm -rf --one-file-system "$tree" "$img.new"' EXIT
python3 -c "$tree_py" link "$tree"
# /bin, /lib, /lib64 are links into /usr on Debian (merged /usr).
for l in bin sbin lib lib64; do [ -L "/$l" ] && ln -sfn "$(readlink "/$l")" "$tree/$l"; done
mkdir -p "$tree"/{etc,tmp,var/tmp,proc,sys,dev,root,home,run}
# The loader's configuration and the accounts, where no package's list has them.
mkdir -p "$tree/etc/ld.so.conf.d"
for f in /etc/ld.so.conf /etc/ld.so.conf.d/* /etc/passwd /etc/group; do
  [ -e "$tree$f" ] || cp -a "$f" "$tree$f"
done
ldconfig -r "$tree"
t1=$SECONDS
apptainer -s build --force --mksquashfs-args '-noI -noD -noF -noX -no-xattrs' "$img.new" "$tree" >&2 ||
  die "apptainer build failed (output above)"
mv "$img.new" "$img"
find "$cache" -maxdepth 1 -name 'torch-*.sif' ! -name "torch-$key.sif" -delete
echo "$prog: made $img ($(du -m "$img" | cut -f1) MiB, $(wc -l <<<"$closure") packages) in $((SECONDS - t0)) s (tree $((t1 - t0)) s, squashfs $((SECONDS - t1)) s)" >&2
echo "$img"
