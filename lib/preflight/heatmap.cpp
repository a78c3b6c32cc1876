// The SVG heatmap of node-to-node figures (render_svg, declared in report.hpp).
// Its size grows with the measured pairs and the nodes, never with nodes²:
// the grey "not measured" grid is one patterned rectangle per panel, and above
// kHeatmapFullMax nodes a cell stands for a block of nodes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <cstring>
#include <map>
#include <string_view>

#include "../base/text.hpp"  // xml_escape
#include "report.hpp"

namespace gangway::preflight {
namespace {

std::string fixed(const char* f, double x) {
    char b[64];
    std::snprintf(b, sizeof b, f, x);
    return b;
}

std::string gbps(double bps) { return fixed("%.1f", bps * 8 / 1e9); }

// The heatmap's panels: the TCP data network (reach, bandwidth, confirm,
// retest) in one, every other fabric in its own (RDMA per rail, NCCL pairs),
// since their rates are not comparable with TCP's.
std::string panel_of(const std::string& stage) {
    for (const char* tcp : {"reach", "bandwidth", "bandwidth-64k", "confirm", "retest"})
        if (stage == tcp) return "";
    return stage;
}

using Pair = std::pair<unsigned, unsigned>;

struct Panel {
    std::map<Pair, double> bw;  // best figure per directed pair
    std::map<Pair, bool> failed;
    double top = 0;
};

// How the matrix is cut: `per` nodes to a row and to a column (1: a cell is
// one pair), `rows` rows and columns.
struct Grid {
    std::size_t per = 1, rows = 0;
};

Grid grid_for(std::size_t n) {
    if (n <= kHeatmapFullMax) return {1, n};
    const std::size_t per = (n + kHeatmapBlocks - 1) / kHeatmapBlocks;
    return {per, (n + per - 1) / per};
}

// One cell: the pairs it stands for. A pair with a figure counts as measured
// even when another stage failed it (as a single cell shows the figure).
struct Cell {
    unsigned measured = 0, failed = 0;
    double worst = std::numeric_limits<double>::infinity();
    Pair worst_at{}, failed_at{};
};

std::map<std::string, Panel> collect(const Report& r) {
    const std::size_t n = r.nodes.size();
    std::map<std::string, Panel> panels;
    panels[""].top = r.expected_bps;
    for (const auto& l : r.links) {
        if (l.from >= n || l.to >= n) continue;
        auto& p = panels[panel_of(l.stage)];
        if (l.stage == "reach") {
            if (!l.ok) p.failed[{l.from, l.to}] = true;
            continue;
        }
        if (!l.bps) {
            p.failed[{l.from, l.to}] = true;
            continue;
        }
        auto& v = p.bw[{l.from, l.to}];
        v = std::max(v, *l.bps);
        p.top = std::max(p.top, *l.bps);
    }
    return panels;
}

std::map<Pair, Cell> cells_of(const Panel& p, const Grid& g) {
    std::map<Pair, Cell> cells;
    auto at = [&](const Pair& k) -> Cell& { return cells[{unsigned(k.first / g.per), unsigned(k.second / g.per)}]; };
    for (const auto& [k, bps] : p.bw) {
        Cell& c = at(k);
        if (c.measured++ == 0 || bps < c.worst) c.worst = bps, c.worst_at = k;
    }
    for (const auto& [k, _] : p.failed) {
        if (p.bw.count(k)) continue;
        Cell& c = at(k);
        if (c.failed++ == 0) c.failed_at = k;
    }
    return cells;
}

// A figure's colour on the check's own rule: red below `slow` x the
// reference (what the check calls a slow link), then yellow at that bound to
// green at the reference and above. The reference is the expected rate for the
// TCP panel (what the check judges against), the panel's fastest figure for
// the others (RDMA rails, NCCL pairs: no expectation of their own).
struct Scale {
    double reference = 0;  // bytes/s
    double slow = 0.5;     // fraction of the reference below which a link is slow
};

std::string rgb(int red, int green, int blue) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "#%02x%02x%02x", red, green, blue);
    return hex;
}

// The colour at q = figure / reference.
std::string colour_at(double q, double slow) {
    if (!std::isfinite(q) || q < slow) return rgb(220, 40, 40);  // slow: one red, as the check has one word
    const double f = std::clamp((q - slow) / (1 - slow), 0.0, 1.0);  // slow -> 0 (yellow), 1 -> green
    return rgb(static_cast<int>(230 * (1 - f)), static_cast<int>(200 + 10 * (1 - f)), 40);
}

std::string colour(double bps, const Scale& sc) {
    return colour_at(sc.reference > 0 ? bps / sc.reference : 0, sc.slow);
}

// An estimate of a text's width in pixels, in DejaVu Sans (what "sans-serif"
// is on Debian) or narrower: wide enough that the canvas holds every line.
int text_width(std::string_view s, int size) {
    double em = 0;
    for (const char c : s) {
        if (c == '&') continue;  // an entity counts as its one character (';' below)
        if (std::strchr("il.,:;|!'()[]{}/ ", c)) em += 0.38;
        else if (std::strchr("mwMW@%", c)) em += 0.95;
        else if (c >= 'A' && c <= 'Z') em += 0.74;
        else em += 0.64;
    }
    return static_cast<int>(std::ceil(em * size)) + 2;
}

class Svg {
public:
    Svg(const Report& r, const Grid& g) : r_(r), g_(g) {}

    const std::string& name(unsigned i) const { return r_.nodes[i].name; }
    std::string pair(const Pair& k) const { return xml_escape(name(k.first)) + " -> " + xml_escape(name(k.second)); }
    std::size_t first(std::size_t row) const { return row * g_.per; }
    std::size_t last(std::size_t row) const { return std::min(r_.nodes.size(), first(row) + g_.per) - 1; }
    // A row's nodes: one name, or "first..last".
    std::string span(std::size_t row) const {
        const std::string a = xml_escape(name(unsigned(first(row))));
        return g_.per == 1 ? a : a + ".." + xml_escape(name(unsigned(last(row))));
    }
    unsigned not_ok(std::size_t row) const {
        unsigned bad = 0;
        for (std::size_t i = first(row); i <= last(row); ++i) bad += r_.nodes[i].status != NodeStatus::ok;
        return bad;
    }

    // A cell's title after "what: ".
    std::string cell_title(const Pair& at, const Cell& c, std::string& text) const {
        if (g_.per == 1) {
            text = c.measured ? gbps(c.worst) : "x";
            return pair(at) + ": " + text;
        }
        std::string t = span(at.first) + " -> " + span(at.second) + ": ";
        if (c.measured)
            t += std::to_string(c.measured) + " pair(s) measured, worst " + gbps(c.worst) + " Gb/s (" + pair(c.worst_at) + ")";
        if (c.failed)
            t += std::string(c.measured ? "; " : "") + std::to_string(c.failed) + " failed (" + pair(c.failed_at) +
                 (c.failed > 1 ? ", ..." : "") + ")";
        return t;
    }

private:
    const Report& r_;
    Grid g_;
};

}  // namespace

std::string render_svg(const Report& r) {
    const std::size_t n = r.nodes.size();
    const auto panels = collect(r);
    const Grid g = grid_for(n);
    const Svg s(r, g);
    const int font = 11, cell = g.rows > 32 ? 14 : 40, pad = 10, gap = 30;
    const int side = static_cast<int>(g.rows) * cell;
    // The geometry from the texts it must hold: the row labels end left of
    // the matrix, the column labels rise at 60 degrees above it, the headings
    // and the legend's lines run to the right; the canvas holds them all.
    int name_w = 0;
    for (std::size_t i = 0; i < g.rows; ++i)
        name_w = std::max(name_w, text_width(s.name(unsigned(s.first(i))), font));
    const int label = std::max(90, name_w + 8);                                          // the matrix's left edge
    const int rise = 22 + static_cast<int>(std::ceil(0.87 * name_w)) + 6;                // heading + column labels
    const int over = static_cast<int>(std::ceil(0.5 * name_w));                          // column labels past the matrix
    const int block = rise + side + gap;                                                 // one panel's height
    const int lx = label + side + std::max(20, over + 10);                               // the legend's column
    const Scale tcp{r.expected_bps, r.slow_ratio > 0 && r.slow_ratio < 1 ? r.slow_ratio : 0.5};

    // The legend's lines, first (their widths set the canvas's).
    struct Line {
        std::string text;
        bool red = false;
    };
    std::vector<Line> status;
    const std::size_t listed = std::min<std::size_t>(n, 40);
    std::size_t ok = 0;
    for (const auto& node : r.nodes) ok += node.status == NodeStatus::ok;
    if (n > listed) status.push_back({std::to_string(ok) + " of " + std::to_string(n) + " nodes ok", ok < n});
    std::size_t shown = 0;
    for (std::size_t i = 0; i < n && shown < listed; ++i) {
        const bool good = r.nodes[i].status == NodeStatus::ok;
        if (n > listed && good) continue;
        status.push_back({xml_escape(r.nodes[i].name) + ": " + to_string(r.nodes[i].status), !good});
        ++shown;
    }
    if (n > listed && n - ok > shown) status.push_back({"and " + std::to_string(n - ok - shown) + " more (see the report)", true});
    const int bar = 180;  // the colour scale's width
    const std::string scale_title = tcp.reference > 0 ? "TCP against the expected rate, Gb/s" : "against the panel's fastest link";
    const std::string scale_note = "other panels: against their fastest link";
    const std::string scale_key = "red: slow (under " + fixed("%.0f", tcp.slow * 100) + " %); green: as expected or faster";
    int legend_w = std::max({bar + 20, text_width(scale_title, font), text_width(scale_note, font), text_width(scale_key, font)});
    for (const auto& l : status) legend_w = std::max(legend_w, text_width(l.text, font));
    const int scale_top = rise, status_top = scale_top + 84;
    const int legend_h = status_top + 26 + 14 * static_cast<int>(status.size());

    std::vector<std::string> headings;
    int width = lx + legend_w + pad;
    for (const auto& [pname, p] : panels) {
        const std::string what = xml_escape(pname.empty() ? "TCP, data network" : pname);
        headings.push_back(what + ": sender (row) to receiver (column), Gb/s" +
                           (pname.empty() ? "; expected " + fixed("%.2f", r.expected_bps * 8 / 1e9) : std::string()) +
                           (g.per > 1 ? "; a cell is the worst pair of two blocks of " + std::to_string(g.per) +
                                            " nodes (every pair is in the JSON report)"
                                      : std::string()));
        width = std::max(width, pad + text_width(headings.back(), font) + pad);
    }
    const int height = std::max(static_cast<int>(panels.size()) * block, legend_h) + pad;

    std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
                    std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"" + std::to_string(font) + "\">\n";
    o += "<title>gangway preflight: node-to-node bandwidth (row sends, column receives), verdict " +
         std::string(to_string(verdict(r))) + "</title>\n";
    o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    int y0 = 0, id = 0;
    std::size_t panel_no = 0;
    for (const auto& [pname, p] : panels) {
        const std::string what = xml_escape(pname.empty() ? "TCP, data network" : pname);
        const Scale sc = pname.empty() && tcp.reference > 0 ? tcp : Scale{p.top, tcp.slow};
        const int top = y0 + rise;
        o += "<text x=\"" + std::to_string(pad) + "\" y=\"" + std::to_string(y0 + 14) + "\">" + headings[panel_no++] +
             "</text>\n";
        for (std::size_t i = 0; i < g.rows; ++i) {
            const unsigned bad = s.not_ok(i);
            const std::string fill = bad ? "#c00000" : "black";
            const std::string tip = g.per == 1 ? "" : "<title>" + s.span(i) + ": " + std::to_string(bad) + " not ok</title>";
            const std::string text = xml_escape(s.name(unsigned(s.first(i))));
            const int pos = label + static_cast<int>(i) * cell + cell / 2;
            o += "<text x=\"" + std::to_string(label - 4) + "\" y=\"" + std::to_string(top + static_cast<int>(i) * cell + cell / 2 + 4) +
                 "\" text-anchor=\"end\" fill=\"" + fill + "\">" + text + tip + "</text>\n";
            o += "<text transform=\"translate(" + std::to_string(pos + 4) + "," + std::to_string(top - 4) +
                 ") rotate(-60)\" fill=\"" + fill + "\">" + text + tip + "</text>\n";
        }
        // The grey grid of pairs not measured, drawn once; measured ones are drawn over it.
        const std::string grid = "grid" + std::to_string(id++);
        o += "<defs><pattern id=\"" + grid + "\" x=\"" + std::to_string(label) + "\" y=\"" + std::to_string(top) +
             "\" width=\"" + std::to_string(cell) + "\" height=\"" + std::to_string(cell) +
             "\" patternUnits=\"userSpaceOnUse\"><rect width=\"" + std::to_string(cell - 1) + "\" height=\"" +
             std::to_string(cell - 1) + "\" fill=\"#eeeeee\"/></pattern></defs>\n";
        o += "<rect x=\"" + std::to_string(label) + "\" y=\"" + std::to_string(top) + "\" width=\"" + std::to_string(side) +
             "\" height=\"" + std::to_string(side) + "\" fill=\"url(#" + grid + ")\"><title>" + what +
             ": not measured</title></rect>\n";
        auto rect = [&](std::size_t row, std::size_t col, const std::string& fill, const std::string& title) {
            const int x = label + static_cast<int>(col) * cell, y = top + static_cast<int>(row) * cell;
            o += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(cell - 1) +
                 "\" height=\"" + std::to_string(cell - 1) + "\" fill=\"" + fill + "\">" +
                 (title.empty() ? "" : "<title>" + title + "</title>") + "</rect>\n";
        };
        if (g.per == 1)
            for (std::size_t i = 0; i < g.rows; ++i) rect(i, i, "#ffffff", "");
        for (const auto& [at, c] : cells_of(p, g)) {
            std::string text;
            const std::string title = what + ": " + s.cell_title(at, c, text);
            rect(at.first, at.second, c.failed ? "#600000" : colour(c.worst, sc), title);
            if (!text.empty() && cell >= 30) {
                const int x = label + static_cast<int>(at.second) * cell, y = top + static_cast<int>(at.first) * cell;
                o += "<text x=\"" + std::to_string(x + cell / 2) + "\" y=\"" + std::to_string(y + cell / 2 + 4) +
                     "\" text-anchor=\"middle\" font-size=\"10\">" + text + "</text>\n";
            }
        }
        y0 += block;
    }

    // The colour scale: red below the slow bound, yellow at it to green at the reference, with their figures.
    {
        const double ref = tcp.reference > 0 ? tcp.reference : 0;
        const int x0 = lx, yb = scale_top + 20, red_w = static_cast<int>(bar * tcp.slow);
        o += "<text x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(scale_top + 10) + "\">" + scale_title + "</text>\n";
        o += "<defs><linearGradient id=\"scale\"><stop offset=\"0\" stop-color=\"" + colour_at(tcp.slow, tcp.slow) +
             "\"/><stop offset=\"1\" stop-color=\"" + colour_at(1, tcp.slow) + "\"/></linearGradient></defs>\n";
        o += "<rect x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(yb) + "\" width=\"" + std::to_string(red_w) +
             "\" height=\"12\" fill=\"" + colour_at(0, tcp.slow) + "\"><title>slow: below " +
             fixed("%.0f", tcp.slow * 100) + " % of the reference</title></rect>\n";
        o += "<rect x=\"" + std::to_string(x0 + red_w) + "\" y=\"" + std::to_string(yb) + "\" width=\"" +
             std::to_string(bar - red_w) + "\" height=\"12\" fill=\"url(#scale)\"/>\n";
        auto tick = [&](int x, const std::string& text, const char* anchor) {
            o += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(yb + 25) + "\" text-anchor=\"" + anchor +
                 "\" font-size=\"10\">" + text + "</text>\n";
        };
        tick(x0, "0", "start");
        tick(x0 + red_w, ref > 0 ? fixed("%.2f", tcp.slow * ref * 8 / 1e9) : fixed("%.0f %%", tcp.slow * 100), "middle");
        tick(x0 + bar, ref > 0 ? fixed("%.2f", ref * 8 / 1e9) : "100 %", "end");
        o += "<text x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(yb + 39) + "\" font-size=\"10\">" + scale_key +
             "</text>\n";
        if (ref > 0 && panels.size() > 1)
            o += "<text x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(yb + 52) + "\" font-size=\"10\">" +
                 scale_note + "</text>\n";
    }
    // Each node's status: every node of a small step; else the count and the nodes not ok.
    o += "<text x=\"" + std::to_string(lx) + "\" y=\"" + std::to_string(status_top + 10) + "\">status</text>\n";
    int line = 0;
    for (const auto& l : status)
        o += "<text x=\"" + std::to_string(lx) + "\" y=\"" + std::to_string(status_top + 26 + 14 * line++) + "\" fill=\"" +
             (l.red ? "#c00000" : "black") + "\">" + l.text + "</text>\n";
    o += "</svg>\n";
    return o;
}

}  // namespace gangway::preflight
