// The trends as text: see trend_text.hpp.
#include "trend_text.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <cmath>
#include <map>

#include "../base/text.hpp"

namespace gangway::fleet {
namespace {

bool named(const std::vector<std::string>& nodes, const std::string& a, const std::string& b) {
    return std::find(nodes.begin(), nodes.end(), a) != nodes.end() ||
           (!b.empty() && std::find(nodes.begin(), nodes.end(), b) != nodes.end());
}

std::string percent(double x) {
    char b[32];
    // recent / baseline - 1 of a baseline near 0 can be 1e300: no 300 digits.
    std::snprintf(b, sizeof b, std::fabs(x) < 1e6 ? "%+.1f %%" : "%+.2g %%", x * 100);
    return b;
}

}  // namespace

std::string utc_text(std::int64_t unix_seconds) {
    char b[32] = "-";
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    if (gmtime_r(&t, &tm)) std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

std::string render_trend_table(const std::vector<ShowRow>& rows, const TrendResult& r, bool fleet_footer) {
    // The series of each (node, metric): a link under both its ends.
    std::map<std::pair<std::string, Metric>, std::vector<const SeriesTrend*>> of;
    for (const SeriesTrend& t : r.series) {
        of[{t.node, t.metric}].push_back(&t);
        if (!t.peer.empty()) of[{t.peer, t.metric}].push_back(&t);
    }
    const auto series_of = [&](const ShowRow& row) -> const std::vector<const SeriesTrend*>* {
        const auto it = of.find({row.node, row.metric});
        return it == of.end() ? nullptr : &it->second;
    };
    // At most kTableMaxRows rows: the flagged ones first, then in order.
    std::vector<bool> keep(rows.size(), rows.size() <= kTableMaxRows);
    if (rows.size() > kTableMaxRows) {
        std::size_t kept = 0;
        for (int pass = 0; pass < 2; ++pass)
            for (std::size_t i = 0; i < rows.size() && kept < kTableMaxRows; ++i) {
                if (keep[i]) continue;
                bool flagged = false;
                if (const auto* v = series_of(rows[i]))
                    for (const SeriesTrend* t : *v) flagged = flagged || t->degrading;
                if (pass == 1 || flagged) keep[i] = true, ++kept;
            }
    }
    std::string out;
    char b[768];
    std::snprintf(b, sizeof b, "%-20s %-15s %14s %5s %-20s %14s %9s %-26s %7s\n", "NODE", "METRIC", "LAST", "OF", "WHEN (UTC)",
                  "BASELINE", "TREND", "FLAG", "CHECKS");
    out += b;
    std::size_t left_out = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ShowRow& row = rows[i];
        if (!keep[i]) {
            ++left_out;
            continue;
        }
        char when[32] = "-";
        const std::time_t tt = row.last_time;
        std::tm tm{};
        if (gmtime_r(&tt, &tm)) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        std::vector<double> baselines;
        std::optional<double> worst;
        std::string flag;
        std::size_t more = 0;
        if (const auto* v = series_of(row))
            for (const SeriesTrend* t : *v) {
                if (t->baseline) baselines.push_back(*t->baseline);
                if (const auto c = t->change(); c && (!worst || *c < *worst)) worst = c;
                if (!t->degrading) continue;
                if (!flag.empty()) {
                    ++more;
                    continue;
                }
                const std::string& other = t->node == row.node ? t->peer : t->node;
                flag = "degrading" + (!other.empty() ? " -> " + printable_name(other)
                                                     : t->device.empty() ? "" : " " + printable_name(t->device));
            }
        if (more) flag += " +" + std::to_string(more);
        std::string base = "-";
        if (!baselines.empty()) {
            std::sort(baselines.begin(), baselines.end());
            const std::size_t n = baselines.size();
            base = human_rate(row.metric, n % 2 ? baselines[n / 2] : (baselines[n / 2 - 1] + baselines[n / 2]) / 2);
        }
        std::snprintf(b, sizeof b, "%-20s %-15s %14s %5zu %-20s %14s %9s %-26s %7zu\n", printable_name(row.node).c_str(),
                      to_string(row.metric), human_rate(row.metric, row.last).c_str(), row.last_figures, when, base.c_str(),
                      worst ? percent(*worst).c_str() : "-", flag.empty() ? "-" : flag.c_str(), row.checks);
        out += b;
    }
    if (left_out)
        out += "and " + std::to_string(left_out) + " more row(s) left out: the table shows at most " +
               std::to_string(kTableMaxRows) + ", the flagged first; name nodes to see theirs\n";
    if (fleet_footer) {
        std::size_t lines = 0, classes_left_out = 0;
        for (const ClassNoise& c : r.classes) {
            if (!c.series) continue;
            if (lines == kTableMaxClasses) {
                ++classes_left_out;
                continue;
            }
            ++lines;
            std::snprintf(b, sizeof b, "noise %s%s%s: %zu series, %.1f %% against their own history, %.1f %% against peers\n",
                          to_string(c.metric), c.peer_class.empty() ? "" : " ", printable_name(c.peer_class).c_str(), c.series,
                          c.noise_own * 100, c.noise_peers * 100);
            out += b;
        }
        if (classes_left_out)
            out += "and " + std::to_string(classes_left_out) + " more class(es) left out: the table shows the noise of at most " +
                   std::to_string(kTableMaxClasses) + "\n";
    }
    return out;
}

std::vector<const Flag*> flags_for(const TrendResult& r, const std::vector<std::string>& nodes) {
    std::vector<const Flag*> out;
    for (const Flag& f : r.flags)
        if (nodes.empty() || named(nodes, f.node, f.peer)) out.push_back(&f);
    return out;
}

std::string render_flagged(const TrendResult& r, const std::vector<std::string>& nodes) {
    std::string out;
    char b[2048];  // three figures of up to 309 digits each (%.0f of 1e308) and three names of 67 bytes
    for (const Flag* f : flags_for(r, nodes)) {
        const std::string who = printable_name(f->node) + (f->peer.empty() ? "" : "->" + printable_name(f->peer));
        std::snprintf(b, sizeof b, "%s %s %s %.0f %.0f %.0f %s\n", who.c_str(), to_string(f->metric),
                      f->device.empty() ? "-" : printable_name(f->device).c_str(), f->recent, f->baseline, f->peers, utc_text(f->since).c_str());
        out += b;
    }
    return out;
}

}  // namespace gangway::fleet
