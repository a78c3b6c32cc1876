// The trend plots: see trend_svg.hpp. The house style is the preflight
// heatmap's (lib/preflight/heatmap.cpp): white ground, sans-serif 11, a
// <title> on every mark for its figure, red (#c00000) for what is wrong.
#include "trend_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "../base/stats.hpp"  // median_in_place
#include "../base/text.hpp"  // printable_name

#include "show.hpp"                  // human_rate
#include "trend_text.hpp"            // utc_text

namespace gangway::fleet {
namespace {


constexpr int kPlotW = 260, kPlotH = 70, kLabel = 150, kGap = 18;

std::string num(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", x);
    return b;
}

std::string series_key(Metric m, const std::string& cls, std::string a, std::string b, const std::string& dev) {
    if (m == Metric::link_bandwidth && b < a) std::swap(a, b);
    if (m != Metric::link_bandwidth) b.clear();
    return std::string(to_string(m)) + '\n' + cls + '\n' + a + '\n' + b + '\n' + dev;
}

// The day's band (the 10th and 90th percentiles): the value at rank q x n.
// Its middle line is the one median (base/stats).
double quantile(std::vector<double>& v, double q) {
    const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
    return v[i];
}

using Days = std::map<std::int64_t, std::vector<double>>;  // day index -> figures

class Plot {
public:
    Plot(std::string& o, int x, int y, std::int64_t first_day, std::int64_t days, std::int64_t bin, double top)
        : o_(o), x_(x), y_(y), first_(first_day), days_(std::max<std::int64_t>(days, 1)), bin_(bin),
          top_(top > 0 && std::isfinite(top) ? top : 1) {
        o_ += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(kPlotW) +
              "\" height=\"" + std::to_string(kPlotH) + "\" fill=\"#f8f8f8\" stroke=\"#cccccc\"/>\n";
    }
    // A point's day is its bin's first (bin_ days a point): drawn at the bin's middle.
    double px(std::int64_t day) const {
        return x_ + kPlotW * (static_cast<double>(day - first_) + 0.5 * static_cast<double>(bin_)) / static_cast<double>(days_);
    }
    double py(double v) const { return y_ + kPlotH - kPlotH * std::clamp(v / top_, 0.0, 1.0); }
    void shade(std::int64_t from_day) {
        const double a = x_ + kPlotW * static_cast<double>(from_day - first_) / static_cast<double>(days_);
        o_ += "<rect x=\"" + num(a) + "\" y=\"" + std::to_string(y_) + "\" width=\"" + num(x_ + kPlotW - a) + "\" height=\"" +
              std::to_string(kPlotH) + "\" fill=\"#e8e8ff\"><title>the recent window</title></rect>\n";
    }
    void hline(double v, const std::string& colour, const char* dash, const std::string& title) {
        o_ += "<line x1=\"" + std::to_string(x_) + "\" x2=\"" + std::to_string(x_ + kPlotW) + "\" y1=\"" + num(py(v)) +
              "\" y2=\"" + num(py(v)) + "\" stroke=\"" + colour + "\" stroke-dasharray=\"" + dash + "\"><title>" + title +
              "</title></line>\n";
    }
    void line(const std::vector<std::pair<std::int64_t, double>>& pts, const std::string& colour, const std::string& title) {
        if (pts.empty()) return;
        std::string d;
        for (const auto& [day, v] : pts) d += (d.empty() ? "M" : " L") + num(px(day)) + "," + num(py(v));
        o_ += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\"><title>" + title +
              "</title></path>\n";
    }
    void band(const std::vector<std::pair<std::int64_t, std::pair<double, double>>>& pts, const std::string& title) {
        if (pts.empty()) return;
        std::string d;
        for (const auto& [day, lh] : pts) d += (d.empty() ? "M" : " L") + num(px(day)) + "," + num(py(lh.second));
        for (auto it = pts.rbegin(); it != pts.rend(); ++it) d += " L" + num(px(it->first)) + "," + num(py(it->second.first));
        o_ += "<path d=\"" + d + " Z\" fill=\"#cfe0cf\" stroke=\"none\"><title>" + title + "</title></path>\n";
    }

private:
    std::string& o_;
    int x_, y_;
    std::int64_t first_, days_, bin_;
    double top_;
};

std::vector<std::pair<std::int64_t, double>> medians(Days& d) {
    std::vector<std::pair<std::int64_t, double>> out;
    for (auto& [day, v] : d) out.emplace_back(day, median_in_place(v.begin(), v.end()));
    return out;
}

}  // namespace

std::string render_trend_svg(const std::vector<Figure>& figures, const TrendResult& r, std::int64_t now,
                             const TrendSettings& s, const std::vector<std::string>& nodes) {
    const std::int64_t from = now - s.history_s, first_day = from / 86400, last_day = now / 86400;
    const std::int64_t days = last_day - first_day + 1;
    // At most kSvgMaxPoints points a plot: a longer window gets bins of several days.
    const std::int64_t bin = (days + std::int64_t(kSvgMaxPoints) - 1) / std::int64_t(kSvgMaxPoints);
    const auto bin_of = [&](std::int64_t day) { return first_day + (day - first_day) / bin * bin; };
    // Every name through printable_name (no control characters, at most 64
    // bytes), then xml_escape (nothing XML 1.0 forbids).
    const auto name = [](const std::string& n) { return xml_escape(printable_name(n)); };
    // Which nodes get plots: the named ones, else the flagged first, then by name.
    std::vector<std::string> shown;
    std::set<std::string> flagged;
    for (const Flag& f : r.flags) flagged.insert(f.node), flagged.insert(f.peer);
    flagged.erase("");
    if (!nodes.empty()) shown = nodes;
    else {
        shown.assign(flagged.begin(), flagged.end());
        for (const SeriesTrend& t : r.series)
            if (!flagged.count(t.node) && (shown.empty() || shown.back() != t.node)) shown.push_back(t.node);
    }
    std::sort(shown.begin(), shown.end(), [&](const std::string& a, const std::string& b) {
        return std::make_pair(!flagged.count(a), a) < std::make_pair(!flagged.count(b), b);
    });
    shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
    const std::size_t left_out = shown.size() > kSvgMaxNodes ? shown.size() - kSvgMaxNodes : 0;
    shown.resize(std::min(shown.size(), kSvgMaxNodes));
    const std::set<std::string> shown_set(shown.begin(), shown.end());

    // Which classes get a fleet plot (at most kSvgMaxClasses): those with a
    // flag first, then the most series; each with its flagged series (at most
    // kSvgMaxSeries drawn), found in one pass, not one pass per class.
    const auto class_key = [](Metric m, const std::string& cls) { return std::string(to_string(m)) + '\n' + cls; };
    std::map<std::string, std::vector<const SeriesTrend*>> class_flags;
    for (const SeriesTrend& t : r.series)
        if (t.degrading) class_flags[class_key(t.metric, t.peer_class)].push_back(&t);
    std::vector<const ClassNoise*> classes;
    for (const ClassNoise& c : r.classes) classes.push_back(&c);
    const auto flags_of = [&](const ClassNoise* c) {
        const auto it = class_flags.find(class_key(c->metric, c->peer_class));
        return it == class_flags.end() ? std::size_t(0) : it->second.size();
    };
    std::stable_sort(classes.begin(), classes.end(), [&](const ClassNoise* a, const ClassNoise* b) {
        return std::make_pair(flags_of(a) == 0, -static_cast<long long>(a->series)) <
               std::make_pair(flags_of(b) == 0, -static_cast<long long>(b->series));
    });
    const std::size_t classes_left_out = classes.size() > kSvgMaxClasses ? classes.size() - kSvgMaxClasses : 0;
    classes.resize(std::min(classes.size(), kSvgMaxClasses));
    std::stable_sort(classes.begin(), classes.end(), [](const ClassNoise* a, const ClassNoise* b) {
        return std::tie(a->metric, a->peer_class) < std::tie(b->metric, b->peer_class);
    });
    std::map<std::string, Days> series_days, class_days;
    for (const ClassNoise* c : classes) class_days[class_key(c->metric, c->peer_class)];

    // Each shown node's series (its own figures, and links that are flagged or whose node was named).
    std::map<std::string, std::vector<const SeriesTrend*>> per_node;
    for (const SeriesTrend& t : r.series) {
        const bool link = !t.peer.empty();
        for (const std::string* n : {&t.node, &t.peer}) {
            if (n->empty() || !shown_set.count(*n)) continue;
            if (link && !t.degrading && nodes.empty()) continue;
            auto& v = per_node[*n];
            if (v.size() < kSvgMaxSeries) v.push_back(&t);
        }
    }
    std::set<std::string> wanted;
    for (auto& [_, v] : per_node)
        for (const SeriesTrend* t : v) wanted.insert(series_key(t->metric, t->peer_class, t->node, t->peer, t->device));
    for (const ClassNoise* c : classes) {
        const auto it = class_flags.find(class_key(c->metric, c->peer_class));
        if (it == class_flags.end()) continue;
        for (std::size_t k = 0; k < it->second.size() && k < kSvgMaxSeries; ++k) {
            const SeriesTrend* t = it->second[k];
            wanted.insert(series_key(t->metric, t->peer_class, t->node, t->peer, t->device));
        }
    }
    for (const Figure& f : figures) {
        if (f.time < from || f.time > now || !std::isfinite(f.value) || f.value < 0) continue;
        const std::int64_t day = bin_of(f.time / 86400);
        if (auto it = class_days.find(class_key(f.metric, f.peer_class)); it != class_days.end()) it->second[day].push_back(f.value);
        const std::string k = series_key(f.metric, f.peer_class, f.node, f.peer, f.device);
        if (wanted.count(k)) series_days[k][day].push_back(f.value);
    }

    std::string o;
    int y = 40;
    std::string body;
    // The fleet view, one plot per class.
    body += "<text x=\"10\" y=\"" + std::to_string(y) + "\" font-weight=\"bold\">the fleet: each class's daily median, 10th to 90th percentile shaded, flagged series in red</text>\n";
    y += 10;
    for (const ClassNoise* cp : classes) {
        const ClassNoise& c = *cp;
        auto it = class_days.find(class_key(c.metric, c.peer_class));
        if (it == class_days.end() || it->second.empty()) continue;
        double top = 0;
        std::vector<std::pair<std::int64_t, std::pair<double, double>>> band;
        std::vector<std::pair<std::int64_t, double>> mid;
        for (auto& [day, v] : it->second) {
            const double lo = quantile(v, 0.1), hi = quantile(v, 0.9), m = median_in_place(v.begin(), v.end());
            band.push_back({day, {lo, hi}});
            mid.emplace_back(day, m);
            top = std::max(top, hi);
        }
        const std::string what = std::string(to_string(c.metric)) + (c.peer_class.empty() ? "" : " " + name(c.peer_class));
        const auto fl = class_flags.find(class_key(c.metric, c.peer_class));
        const std::size_t nflags = fl == class_flags.end() ? 0 : fl->second.size();
        for (std::size_t k = 0; k < nflags && k < kSvgMaxSeries; ++k)
            if (fl->second[k]->baseline) top = std::max(top, *fl->second[k]->baseline);
        top *= 1.1;
        body += "<text x=\"" + std::to_string(kLabel - 6) + "\" y=\"" + std::to_string(y + 20) + "\" text-anchor=\"end\">" + what +
                "</text>\n<text x=\"" + std::to_string(kLabel - 6) + "\" y=\"" + std::to_string(y + 34) +
                "\" text-anchor=\"end\" font-size=\"9\">" + std::to_string(c.series) + " series, noise " +
                num(c.noise_own * 100) + " %</text>\n";
        Plot p(body, kLabel, y, first_day, days, bin, top);
        p.shade((now - s.recent_s) / 86400);
        p.band(band, what + ": 10th to 90th percentile of the day's figures");
        p.line(mid, "#208020", what + ": the fleet's daily median");
        for (std::size_t k = 0; k < nflags && k < kSvgMaxSeries; ++k) {
            const SeriesTrend& t = *fl->second[k];
            auto sd = series_days.find(series_key(t.metric, t.peer_class, t.node, t.peer, t.device));
            if (sd != series_days.end())
                p.line(medians(sd->second), "#c00000", name(t.node) + (t.peer.empty() ? "" : " -&gt; " + name(t.peer)) + ": degrading");
        }
        body += "<text x=\"" + std::to_string(kLabel + kPlotW + 6) + "\" y=\"" + std::to_string(y + 10) + "\" font-size=\"9\">" +
                xml_escape(human_rate(c.metric, top / 1.1)) + "</text>\n";
        if (nflags > kSvgMaxSeries)
            body += "<text x=\"" + std::to_string(kLabel + kPlotW + 6) + "\" y=\"" + std::to_string(y + 24) +
                    "\" font-size=\"9\">and " + std::to_string(nflags - kSvgMaxSeries) + " more flagged</text>\n";
        y += kPlotH + kGap;
    }
    if (classes_left_out)
        body += "<text x=\"10\" y=\"" + std::to_string(y + 4) + "\">and " + std::to_string(classes_left_out) +
                " more class(es): the plots show at most " + std::to_string(kSvgMaxClasses) +
                ", the flagged first, then the largest</text>\n",
            y += 20;
    // The nodes.
    y += 10;
    body += "<text x=\"10\" y=\"" + std::to_string(y) + "\" font-weight=\"bold\">nodes: daily medians, baseline dashed, peers dotted, recent window shaded</text>\n";
    y += 10;
    int widest = kLabel + kPlotW + 120;
    for (const std::string& n : shown) {
        const auto it = per_node.find(n);
        const bool bad = flagged.count(n) > 0;
        body += "<text x=\"10\" y=\"" + std::to_string(y + 14) + "\" fill=\"" + (bad ? "#c00000" : "black") + "\">" + name(n) +
                (bad ? " (degrading)" : "") + "</text>\n";
        if (it == per_node.end()) {
            body += "<text x=\"" + std::to_string(kLabel) + "\" y=\"" + std::to_string(y + 14) + "\">no figures in the window</text>\n";
            y += 24;
            continue;
        }
        int x = kLabel;
        for (const SeriesTrend* t : it->second) {
            auto sd = series_days.find(series_key(t->metric, t->peer_class, t->node, t->peer, t->device));
            std::vector<std::pair<std::int64_t, double>> pts;
            if (sd != series_days.end()) pts = medians(sd->second);
            double top = 0;
            for (auto& [_, v] : pts) top = std::max(top, v);
            if (t->baseline) top = std::max(top, *t->baseline);
            if (t->peers) top = std::max(top, *t->peers);
            top *= 1.1;
            const std::string what = std::string(to_string(t->metric)) +
                                     (t->peer.empty() ? (t->device.empty() ? "" : " " + name(t->device))
                                                      : " " + name(t->node) + " -&gt; " + name(t->peer));
            Plot p(body, x, y + 14, first_day, days, bin, top);
            p.shade((now - s.recent_s) / 86400);
            if (t->baseline) p.hline(*t->baseline, "#404040", "4,3", what + ": baseline " + xml_escape(human_rate(t->metric, *t->baseline)));
            if (t->peers) p.hline(*t->peers, "#208020", "1,2", what + ": peers " + xml_escape(human_rate(t->metric, *t->peers)));
            p.line(pts, t->degrading ? "#c00000" : "#2050a0", what + ": last " + xml_escape(human_rate(t->metric, t->last)));
            body += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y + 10) + "\" font-size=\"9\" fill=\"" +
                    (t->degrading ? "#c00000" : "black") + "\">" + what + "</text>\n";
            x += kPlotW + 12;
            widest = std::max(widest, x);
        }
        y += kPlotH + kGap + 14;
    }
    if (left_out)
        body += "<text x=\"10\" y=\"" + std::to_string(y + 10) + "\">and " + std::to_string(left_out) +
                " more node(s): name them to plot them</text>\n",
            y += 20;
    o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(widest + 10) + "\" height=\"" +
        std::to_string(y + 20) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    o += "<title>gangway fleet: trends over " + std::to_string(s.history_s / 86400) + " days to " + utc_text(now) + "</title>\n";
    o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    o += "<text x=\"10\" y=\"20\" font-size=\"13\">gangway fleet: " + std::to_string(r.flags.size()) + " flag(s)</text>\n";
    o += body + "</svg>\n";
    return o;
}

}  // namespace gangway::fleet
