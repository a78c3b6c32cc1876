#!/bin/bash
# The job check's heatmap as a person sees it: the unit tests' hidden case
# writes heatmaps (4 nodes, long and wide node names, 128 nodes, 2,048 nodes
# with RDMA rails, one node), rsvg-convert (librsvg, Debian's) renders each
# on a canvas 200 px larger on every side, and every pixel outside the SVG's
# own canvas must be white: a title, a label or a legend line that runs past
# the edge is cut in any viewer, and here it is ink outside the box.
set -u
. "$(dirname "$0")/lib/script_env.sh"
command -v rsvg-convert >/dev/null || test_skip "rsvg-convert is not installed (apt-get install librsvg2-bin)"
/usr/bin/python3 -c "import PIL" 2>/dev/null || test_skip "Python's PIL is not installed (apt-get install python3-pil)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
GANGWAY_HEATMAP_DIR=$out "$top_builddir/tests/unit/unit_tests" "[.heatmap-render]" >"$out/unit.log" 2>&1 \
  || { cat "$out/unit.log"; fail "the unit tests' heatmap writer failed"; finish; }
n=0
for svg in "$out"/*.svg; do
  name=$(basename "$svg" .svg)
  # The same drawing on a larger canvas: width and height +400, the origin moved by 200.
  /usr/bin/python3 - "$svg" "$out/$name.big.svg" <<'PY' || fail "$name: cannot enlarge the canvas"
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r'<svg [^>]*width="(\d+)" height="(\d+)"', s)
w, h = int(m.group(1)), int(m.group(2))
head = '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="-200 -200 %d %d"' % (w + 400, h + 400, w + 400, h + 400)
s = re.sub(r'<svg xmlns="[^"]*" width="\d+" height="\d+"', head, s, count=1)
# The background's 100 % is of the larger canvas: keep it to the drawing's own.
s = s.replace('<rect width="100%" height="100%" fill="white"/>', '<rect width="%d" height="%d" fill="white"/>' % (w, h), 1)
open(sys.argv[2], 'w').write(s)
open(sys.argv[2] + '.size', 'w').write('%d %d' % (w, h))
PY
  [ -f "$out/$name.big.svg.size" ] || continue
  rsvg-convert -b white -o "$out/$name.png" "$out/$name.big.svg" || { fail "$name: rsvg-convert cannot render it"; continue; }
  /usr/bin/python3 - "$out/$name.png" $(cat "$out/$name.big.svg.size") <<'PY' || { fail "$name: drawn past its canvas (above)"; continue; }
import sys
from PIL import Image
path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
img = Image.open(path).convert('L')
img.paste(255, (200, 200, 200 + w, 200 + h))          # the drawing's own canvas: anything goes there
ink = img.point(lambda v: 255 if v < 235 else 0)      # what is not (nearly) white, outside it
box = ink.getbbox()
if box:
    print('drawn outside the %dx%d canvas: x %d..%d, y %d..%d (canvas coordinates)' %
          (w, h, box[0] - 200, box[2] - 201, box[1] - 200, box[3] - 201))
    sys.exit(1)
PY
  pass "$name: nothing drawn past its $(cat "$out/$name.big.svg.size" | tr ' ' x) canvas"
  n=$((n + 1))
done
[ "$n" -ge 5 ] || fail "expected 5 heatmaps, rendered $n"
finish
