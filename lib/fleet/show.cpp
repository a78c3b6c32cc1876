#include "show.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include "../base/stats.hpp"
#include "../base/text.hpp"

namespace gangway::fleet {

namespace {

// A row from its last check's figures (reordered here) and its count of checks.
ShowRow make_row(const std::string& node, Metric m, std::vector<double>& v, std::int64_t last_time, std::size_t checks) {
    ShowRow r;
    r.node = node;
    r.metric = m;
    r.last = median_in_place(v.begin(), v.end());
    r.last_figures = v.size();
    r.last_time = last_time;
    r.checks = checks;
    return r;
}

}  // namespace

std::vector<ShowRow> show_rows(const std::vector<Figure>& figures) {
    struct Acc {
        std::int64_t last_time = INT64_MIN;
        std::string last_check;
        std::vector<double> last_values;
        std::set<std::string> checks;
        std::size_t folded = 0;
    };
    std::map<std::pair<std::string, Metric>, Acc> acc;
    for (const auto& f : figures) {
        auto& a = acc[{f.node, f.metric}];
        // A daily row stands for `count` figures; their checks are not known one by one.
        if (f.daily) a.folded += f.count;
        else a.checks.insert(f.check_id);
        const std::string id = f.daily ? "day " + std::to_string(f.time) : f.check_id;
        if (f.time > a.last_time || (f.time == a.last_time && id > a.last_check)) {
            a.last_time = f.time;
            a.last_check = id;
            a.last_values.clear();
        }
        if (f.time == a.last_time && id == a.last_check) a.last_values.push_back(f.value);
    }
    std::vector<ShowRow> out;
    for (auto& [k, a] : acc) {
        out.push_back(make_row(k.first, k.second, a.last_values, a.last_time, a.checks.size() + a.folded));
    }
    return out;
}

ShowBuilder::Row ShowBuilder::row(const std::string& node, Metric m) { return &acc_[{node, m}]; }

void ShowBuilder::add(Row r, std::int64_t time, double value, std::uint64_t check, bool folded, std::uint32_t count) {
    Acc& a = *r;
    if (folded) a.folded += count;
    else if (a.checks.empty() || a.checks.back() != check) {  // a check's figures of a row mostly come together
        a.checks.push_back(check);
        // Kept sorted and unique every time it doubles: memory in the checks, not their figures.
        if (a.checks.size() >= 2 * a.unique + 64) {
            std::sort(a.checks.begin(), a.checks.end());
            a.checks.erase(std::unique(a.checks.begin(), a.checks.end()), a.checks.end());
            a.unique = a.checks.size();
        }
    }
    const std::pair<bool, std::uint64_t> id{!folded, folded ? 0 : check};
    if (time > a.last_time || (time == a.last_time && id > a.last_check)) {
        a.last_time = time;
        a.last_check = id;
        a.last_values.clear();
    }
    if (time == a.last_time && id == a.last_check) a.last_values.push_back(value);
}

std::vector<ShowRow> ShowBuilder::rows() {
    std::vector<ShowRow> out;
    for (auto& [k, a] : acc_) {
        std::sort(a.checks.begin(), a.checks.end());
        a.checks.erase(std::unique(a.checks.begin(), a.checks.end()), a.checks.end());
        out.push_back(make_row(k.first, k.second, a.last_values, a.last_time, a.checks.size() + a.folded));
    }
    acc_.clear();
    return out;
}

std::string human_rate(Metric m, double bps) {
    char b[64];
    const bool bytes = m == Metric::gpu_h2d || m == Metric::gpu_d2h || m == Metric::nccl_busbw;
    const double x = bytes ? bps / 1e9 : bps * 8 / 1e9;
    // A figure from a report can be 1e300: %.1f would print 300 digits.
    if (!(std::fabs(x) < 1e12)) std::snprintf(b, sizeof b, "%.3g %s", x, bytes ? "GB/s" : "Gb/s");
    else std::snprintf(b, sizeof b, bytes ? "%.1f GB/s" : "%.2f Gb/s", x);
    return b;
}

std::string render_show(const std::vector<ShowRow>& rows) {
    std::string out;
    char b[512];
    std::snprintf(b, sizeof b, "%-20s %-15s %14s %5s %-20s %7s\n", "NODE", "METRIC", "LAST", "OF", "WHEN (UTC)", "CHECKS");
    out += b;
    for (const auto& r : rows) {
        char when[32] = "-";
        const std::time_t t = r.last_time;
        std::tm tm{};
        if (gmtime_r(&t, &tm)) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        std::snprintf(b, sizeof b, "%-20s %-15s %14s %5zu %-20s %7zu\n", printable_name(r.node).c_str(), to_string(r.metric),
                      human_rate(r.metric, r.last).c_str(), r.last_figures, when, r.checks);
        out += b;
    }
    return out;
}

}  // namespace gangway::fleet
