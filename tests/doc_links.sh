#!/bin/bash
# README.md is an entry page (issue 32, item 7): at most about 200 lines, and
# every page of docs/ one click from it. This checks that, and that every
# relative link of README.md, docs/*.md and the other Markdown pages of the
# tree (SECURITY.md, BENCHMARKS.md, the READMEs of the test cluster, the
# examples and the fixtures) resolves: the file or folder exists
# (in the source tree, or in the release tarball under make distcheck), and a
# #fragment names a heading of the Markdown file it points into, by GitHub's
# rule for heading ids. Links in fenced code blocks and code spans are not
# links; http(s) and mailto links are not followed (no network).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || { echo "FAIL: no source tree at $top_srcdir"; exit 1; }
fail=0
max_readme_lines=220

# links FILE: the target of each link and image of a Markdown file, one a line.
links() {
  awk '/^[ \t]*```/ { fence = !fence; next }
       !fence { gsub(/`[^`]*`/, "")
                while (match($0, /\]\([^) ]+\)/)) { print substr($0, RSTART + 2, RLENGTH - 3); $0 = substr($0, RSTART + RLENGTH) } }' "$1"
}
# anchors FILE: the id GitHub gives each heading: lower case, punctuation
# dropped, spaces made hyphens, "-1", "-2", ... after a repeated one.
anchors() {
  awk '/^[ \t]*```/ { fence = !fence; next }
       !fence && /^#+ / { h = $0; sub(/^#+ +/, "", h); h = tolower(h); gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
                          n = seen[h]++; print (n ? h "-" n : h) }' "$1"
}

pages=(README.md docs/*.md SECURITY.md BENCHMARKS.md tests/cluster/README.md contrib/examples/README.md tests/fixtures/*/README.md)
for page in "${pages[@]}"; do [ -f "$page" ] || { echo "FAIL: $page missing in $top_srcdir"; exit 1; }; done
checked=0
for page in "${pages[@]}"; do
  dir=$(dirname "$page")
  while IFS= read -r link; do
    case $link in http:* | https:* | mailto:*) continue ;; esac
    path=${link%%#*}
    frag=; [ "$path" != "$link" ] && frag=${link#*#}
    if [ -z "$path" ]; then target=$page; else target=$dir/$path; fi
    checked=$((checked + 1))
    if [ ! -e "$target" ]; then echo "FAIL: $page links to $link: $target does not exist"; fail=1; continue; fi
    if [ -n "$frag" ]; then
      case $target in
        *.md) anchors "$target" | grep -qxF -- "$frag" || { echo "FAIL: $page links to $link: $target has no heading with the id $frag"; fail=1; } ;;
        *) echo "FAIL: $page links to $link: a #fragment into a file that is not Markdown"; fail=1 ;;
      esac
    fi
  done < <(links "$page")
done
[ $fail = 0 ] && echo "ok: $checked relative links of ${#pages[@]} pages resolve"

# One click: README.md links every page of docs/.
readme_links=$(links README.md | sed 's/#.*//' | sort -u)
for page in docs/*.md; do
  grep -qxF -- "$page" <<<"$readme_links" || { echo "FAIL: README.md does not link $page"; fail=1; }
done

lines=$(wc -l <README.md)
if [ "$lines" -gt $max_readme_lines ]; then
  echo "FAIL: README.md has $lines lines, more than $max_readme_lines: it is the entry page; move the detail to docs/ and link it"
  fail=1
else echo "ok: README.md has $lines lines (at most $max_readme_lines) and links every page of docs/"; fi
exit $fail
