// The fleet's trends: see trend.hpp for the rule and why.
#include "trend.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "../base/error.hpp"
#include "../base/keyed_hash.hpp"
#include "../base/stats.hpp"  // median, mad

namespace gangway::fleet {
namespace {

// 1.4826 x MAD estimates a normal distribution's standard deviation.
constexpr double kMadToSigma = 1.4826;

// A robust spread as a fraction: 1.4826 x the MAD of `r`; nullopt when there are fewer than `need`.
std::optional<double> spread(const std::vector<double>& r, std::size_t need) {
    if (r.size() < std::max<std::size_t>(need, 1)) return std::nullopt;
    return kMadToSigma * mad(r);
}

// Whether names `a` come before names `b` (as a tuple of them would), each
// pair of names compared once: a tuple's < compares each field both ways,
// and the readers sort 65,000 series by four names twice (issue 34).
bool names_less(std::initializer_list<std::string_view> a, std::initializer_list<std::string_view> b) {
    for (auto x = a.begin(), y = b.begin(); x != a.end() && y != b.end(); ++x, ++y)
        if (const int c = x->compare(*y)) return c < 0;
    return a.size() < b.size();
}

// The median of sorted `v` with element `skip` left out (v.size() >= 2).
double median_without(const std::vector<double>& v, std::size_t skip) {
    const std::size_t m = v.size() - 1;
    auto at = [&](std::size_t j) { return v[j < skip ? j : j + 1]; };
    return m % 2 ? at(m / 2) : (at(m / 2 - 1) + at(m / 2)) / 2;
}

// A series' identity: a link's two nodes in name order, so that A->B and
// B->A are one link (both ends' figures count).
struct Key {
    Metric metric;
    const std::string *cls, *a, *b, *dev;
    bool operator==(const Key& o) const {
        return metric == o.metric && *cls == *o.cls && *a == *o.a && *b == *o.b && *dev == *o.dev;
    }
};
// Keyed (keyed_hash.hpp): node names, devices and classes are users' text,
// and std::hash of them can be collided at will (issue 31, item 6).
struct KeyHash {
    std::size_t operator()(const Key& k) const {
        // Each field with its length first: ("ab", "c") and ("a", "bc") differ.
        thread_local std::string buf;
        buf.assign(1, static_cast<char>(k.metric));
        for (const std::string* s : {k.cls, k.a, k.b, k.dev}) {
            const std::uint32_t n = static_cast<std::uint32_t>(s->size());
            buf.append(reinterpret_cast<const char*>(&n), sizeof n).append(*s);
        }
        return KeyedHash{}(buf);
    }
};

struct Series {
    // Only for a series that can still be flagged (TrendBuilder::add): its
    // figures by time; empty for the rest.
    std::vector<TrendPoint> rows;
    std::size_t cut = 0;              // rows[0, cut) history, [cut, end) recent
    SeriesTrend t;
    // What the series gives its class's statistics (vouched): unset
    // when no root check and no second user vouch for that part of it.
    std::optional<double> class_recent, class_baseline;
    std::size_t class_recent_n = 0;
};

// Whether rows [b, e) may shape the class's statistics (issue 31, item 3):
// only when root's node checks or the job checks of at least two users are
// among them (and they are at least `need`, and one); else the series gives
// its class nothing, so that a series one user alone reports (a node that
// does not exist, a node no one else measured) shapes no other series'
// peers' median, noise or typical count. (Root's figures alone, when there
// are enough, would also keep one user's flood of a root-measured node out,
// but their medians are noisier: the synthetic fleet's degrading node was
// then flagged days later.) What it gives is the median of those rows: the
// series' own recent median or baseline, the same figures (TrendBuilder::add
// takes it from there rather than sorting them again: issue 34).
bool vouched(const std::vector<TrendPoint>& rows, std::size_t b, std::size_t e, std::size_t need) {
    if (e - b < std::max<std::size_t>(need, 1)) return false;
    bool root = false, two = false;
    for (std::size_t k = b, first = e; k < e && !two && !root; ++k)
        if (by_root(rows[k].uid)) root = true;
        else if (first == e) first = k;
        else two = rows[k].uid != rows[first].uid;
    return root || two;
}

// The largest lower median of `rows` with any one user's job figures taken
// out (or none), by binary search over the values: O(n log n). nullopt when
// taking one user out leaves fewer than `need` figures: then that user's
// word alone would decide. `sign` -1 gives the smallest (of the negated values).
std::optional<double> worst_median(const std::vector<TrendPoint>& rows, std::size_t need, double sign) {
    struct V {
        double v;
        std::size_t group;  // 0: root's figures; i: the i-th other uid
    };
    std::vector<std::pair<std::uint32_t, double>> jobs;
    std::vector<V> vals;
    for (const TrendPoint& f : rows)
        if (!by_root(f.uid)) jobs.emplace_back(f.uid, sign * f.value);
        else vals.push_back({sign * f.value, 0});
    std::sort(jobs.begin(), jobs.end());
    std::vector<std::size_t> size{vals.size()};
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (i == 0 || jobs[i].first != jobs[i - 1].first) size.push_back(0);
        ++size.back();
        vals.push_back({jobs[i].second, size.size() - 1});
    }
    const std::size_t n = vals.size();
    if (n < need) return std::nullopt;
    for (std::size_t g = 1; g < size.size(); ++g)
        if (n - size[g] < need) return std::nullopt;
    std::vector<double> sorted;
    for (const V& x : vals) sorted.push_back(x.v);
    std::sort(sorted.begin(), sorted.end());
    // Whether every lower median (all, and without each user) is <= x.
    std::vector<std::size_t> below(size.size());
    auto all_at_most = [&](double x) {
        std::fill(below.begin(), below.end(), 0);
        std::size_t c = 0;
        for (const V& v : vals)
            if (v.v <= x) ++c, ++below[v.group];
        if (c < (n + 1) / 2) return false;
        for (std::size_t g = 1; g < size.size(); ++g)
            if (c - below[g] < (n - size[g] + 1) / 2) return false;
        return true;
    };
    std::size_t lo = 0, hi = n - 1;  // all_at_most(sorted[n - 1]) holds
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (all_at_most(sorted[mid])) hi = mid;
        else lo = mid + 1;
    }
    return sign * sorted[lo];
}

std::optional<Flag> judge(Series& s, const TrendSettings& set, const ClassNoise& c,
                          const std::function<std::string(std::uint64_t)>& check_id) {
    SeriesTrend& t = s.t;
    if (!t.recent || !t.baseline || !t.peers) return std::nullopt;
    // A series with fewer recent figures than the class's typical one has a
    // noisier median: its noise grows as 1/sqrt(figures).
    const double scale = t.recent_n < c.typical_recent_n
                             ? std::sqrt(static_cast<double>(c.typical_recent_n) / static_cast<double>(t.recent_n))
                             : 1.0;
    t.t_own = std::max(set.min_margin, set.k * c.noise_own * scale);
    t.t_peers = std::max(set.min_margin, set.k * c.noise_peers * scale);
    const double peer_line = *t.peers * (1 - t.t_peers);
    if (!(*t.recent < std::min(*t.baseline * (1 - t.t_own), peer_line))) return std::nullopt;
    if (s.rows.empty()) return std::nullopt;  // not kept: TrendBuilder::add showed it cannot get here
    // One user's figures alone can neither pull the recent median down nor
    // push the baseline up: both are taken at their worst with any one
    // user's job figures left out.
    const std::vector<TrendPoint> hist(s.rows.begin(), s.rows.begin() + static_cast<std::ptrdiff_t>(s.cut)),
        rec(s.rows.begin() + static_cast<std::ptrdiff_t>(s.cut), s.rows.end());
    const auto recent_hi = worst_median(rec, set.min_recent, 1);
    const auto baseline_lo = worst_median(hist, set.min_baseline, -1);
    if (!recent_hi || !baseline_lo) return std::nullopt;
    const double line = std::min(*baseline_lo * (1 - t.t_own), peer_line);
    if (!(*recent_hi < line)) return std::nullopt;
    Flag fl;
    fl.node = t.node, fl.peer = t.peer, fl.device = t.device, fl.metric = t.metric;
    fl.recent = *t.recent, fl.baseline = *t.baseline, fl.peers = *t.peers;
    std::vector<std::uint32_t> uids;
    for (const TrendPoint& f : rec) {
        if (!(f.value < line)) continue;
        if (fl.checks.empty()) fl.since = f.time;
        std::string id = check_id(f.check);
        if (std::find(fl.checks.begin(), fl.checks.end(), id) == fl.checks.end()) {
            fl.checks.push_back(std::move(id));
            if (fl.checks.size() > kFlagMaxChecks) fl.checks.erase(fl.checks.begin());
        }
        if (by_root(f.uid)) fl.root = true;
        else uids.push_back(f.uid);
    }
    std::sort(uids.begin(), uids.end());
    fl.users = static_cast<std::size_t>(std::unique(uids.begin(), uids.end()) - uids.begin());
    if (!fl.root && fl.users < 2) return std::nullopt;  // SECURITY.md: never one user's word alone
    t.degrading = true;
    return fl;
}

}  // namespace

std::optional<double> SeriesTrend::change() const {
    if (!recent || !baseline || !(*baseline > 0)) return std::nullopt;
    return *recent / *baseline - 1;
}

struct TrendBuilder::State {
    std::int64_t now = 0, from = 0, cut = 0;
    TrendSettings set;
    // A deque: a reader adds 65,000 series one at a time, and a vector moved
    // them all at each growth (and held both copies then).
    std::deque<Series> series;
    std::vector<double> v;  // scratch
};

TrendBuilder::TrendBuilder(std::int64_t now, const TrendSettings& set) : st_(std::make_unique<State>()) {
    if (set.recent_s <= 0 || set.history_s <= set.recent_s)
        throw Error("trend settings: the recent window must be positive and shorter than the history window");
    if (!(set.k >= 0) || !(set.min_margin >= 0) || !(set.min_margin < 1))
        throw Error("trend settings: k and the margin must be at least 0 (the margin under 1)");
    if (set.min_recent == 0) throw Error("trend settings: a series needs at least one recent figure");
    st_->now = now, st_->set = set;
    st_->from = now - set.history_s, st_->cut = now - set.recent_s;
}
TrendBuilder::TrendBuilder(TrendBuilder&&) noexcept = default;
TrendBuilder& TrendBuilder::operator=(TrendBuilder&&) noexcept = default;
TrendBuilder::~TrendBuilder() = default;

void TrendBuilder::add(SeriesKey key, std::vector<TrendPoint> rows) {
    State& st = *st_;
    const TrendSettings& set = st.set;
    std::erase_if(rows, [&](const TrendPoint& f) {
        return f.time < st.from || f.time > st.now || !std::isfinite(f.value) || f.value < 0;
    });
    if (rows.empty()) return;
    // By time, ties in the order given; the readers hand them sorted already.
    const auto by_time = [](const TrendPoint& x, const TrendPoint& y) { return x.time < y.time; };
    if (!std::is_sorted(rows.begin(), rows.end(), by_time)) std::stable_sort(rows.begin(), rows.end(), by_time);
    Series s;
    s.cut = static_cast<std::size_t>(
        std::partition_point(rows.begin(), rows.end(), [&](const TrendPoint& f) { return f.time < st.cut; }) - rows.begin());
    SeriesTrend& t = s.t;
    t.node = std::move(key.node), t.peer = std::move(key.peer), t.device = std::move(key.device);
    t.peer_class = std::move(key.peer_class), t.metric = key.metric;
    t.baseline_n = s.cut, t.recent_n = rows.size() - s.cut;
    t.last = rows.back().value, t.last_time = rows.back().time;
    // The values once, history then recent; each window's median reorders its own part.
    std::vector<double>& v = st.v;
    v.clear();
    for (const TrendPoint& f : rows) v.push_back(f.value);
    auto med = [&](std::size_t b, std::size_t e) { return median_in_place(v.data() + b, v.data() + e); };
    if (t.recent_n >= set.min_recent) t.recent = med(s.cut, rows.size());
    if (t.baseline_n >= set.min_baseline) t.baseline = med(0, s.cut);
    // What the series gives its class: the same medians, when vouched for.
    if (t.recent && vouched(rows, s.cut, rows.size(), set.min_recent)) s.class_recent = t.recent, s.class_recent_n = t.recent_n;
    if (t.baseline && vouched(rows, 0, s.cut, set.min_baseline)) s.class_baseline = t.baseline;
    // The line is at most baseline x (1 - min_margin) whatever the noise
    // (judge: t_own >= min_margin): a series whose recent median is not below
    // that is never flagged, and its figures are not needed again.
    if (t.recent && t.baseline && *t.recent < *t.baseline * (1 - set.min_margin)) s.rows = std::move(rows);
    else s.cut = 0;
    st.series.push_back(std::move(s));
}

TrendResult TrendBuilder::finish(const std::function<std::string(std::uint64_t)>& check_id) {
    State& st = *st_;
    const TrendSettings& set = st.set;
    std::deque<Series>& series = st.series;
    // Classes (metric, peer_class) become runs, series in name order within
    // them. The series are put in order by their indexes (a series is a few
    // hundred bytes; a reader's 65,000 were moved through every sort): `at(k)`
    // is the k-th in that order.
    std::vector<std::size_t> ord(series.size());
    for (std::size_t k = 0; k < ord.size(); ++k) ord[k] = k;
    std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) {
        const SeriesTrend &x = series[a].t, &y = series[b].t;
        if (x.metric != y.metric) return x.metric < y.metric;
        return names_less({x.peer_class, x.node, x.peer, x.device}, {y.peer_class, y.node, y.peer, y.device});
    });
    const auto at = [&](std::size_t k) -> Series& { return series[ord[k]]; };

    TrendResult out;
    for (std::size_t i = 0; i < series.size();) {
        std::size_t j = i;
        while (j < series.size() && at(j).t.metric == at(i).t.metric &&
               at(j).t.peer_class == at(i).t.peer_class)
            ++j;
        // The class's statistics come from the vouched parts of its series
        // only (vouched); every series of the class is judged by them.
        std::vector<std::pair<double, std::size_t>> rec;
        for (std::size_t k = i; k < j; ++k)
            if (at(k).class_recent) rec.emplace_back(*at(k).class_recent, k);
        std::sort(rec.begin(), rec.end());
        std::vector<double> vals;
        for (auto& [x, _] : rec) vals.push_back(x);
        std::vector<std::optional<double>> own_peers(j - i);  // what each vouched series' own ratio is taken against
        if (rec.size() > set.min_peers) {  // at least min_peers others for every series
            const double all = median(vals);
            for (std::size_t k = i; k < j; ++k)
                if (at(k).t.recent) at(k).t.peers = all;
            for (std::size_t p = 0; p < rec.size(); ++p) {
                // A vouched series is not its own peer.
                const std::size_t k = rec[p].second;
                own_peers[k - i] = median_without(vals, p);
                if (at(k).t.recent) at(k).t.peers = own_peers[k - i];
            }
        }
        ClassNoise c;
        c.metric = at(i).t.metric, c.peer_class = at(i).t.peer_class, c.series = rec.size();
        std::vector<std::size_t> counts;
        for (auto& [_, k] : rec) counts.push_back(at(k).class_recent_n);
        if (!counts.empty()) {
            c.typical_recent_n = lower_median(std::move(counts));
        }
        std::vector<double> own, peer;
        for (auto& [r, k] : rec) {
            const Series& x = at(k);
            if (x.class_baseline && *x.class_baseline > 0) own.push_back(r / *x.class_baseline);
            if (own_peers[k - i] && *own_peers[k - i] > 0) peer.push_back(r / *own_peers[k - i]);
        }
        const auto so = spread(own, set.min_peers + 1), sp = spread(peer, set.min_peers + 1);
        if (so && sp) {
            c.noise_own = *so, c.noise_peers = *sp;
            for (std::size_t k = i; k < j; ++k)
                if (auto fl = judge(at(k), set, c, check_id)) out.flags.push_back(std::move(*fl));
        }
        out.classes.push_back(c);
        i = j;
    }
    auto order = [](const auto& x, const auto& y) {
        if (const int c = x.node.compare(y.node)) return c < 0;
        if (x.metric != y.metric) return x.metric < y.metric;
        return names_less({x.device, x.peer}, {y.device, y.peer});
    };
    // The rows by name: the same sort of the same sequence as the series
    // themselves would be, done on their indexes, then each moved once.
    std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return order(series[a].t, series[b].t); });
    out.series.reserve(series.size());
    for (const std::size_t k : ord) out.series.push_back(std::move(series[k].t));
    series.clear();
    std::sort(out.flags.begin(), out.flags.end(), order);
    return out;
}

TrendResult compute_trends(const std::vector<Figure>& figures, std::int64_t now, const TrendSettings& set) {
    TrendBuilder b(now, set);
    const std::int64_t from = now - set.history_s;
    static const std::string none;
    // Group the window's figures by series: one hash lookup each, O(n); each
    // series' figures in the order given (the builder's sort is stable).
    std::vector<std::pair<Key, std::vector<TrendPoint>>> series;
    std::unordered_map<Key, std::size_t, KeyHash> index;
    for (std::size_t i = 0; i < figures.size(); ++i) {
        const Figure& f = figures[i];
        if (f.time < from || f.time > now || !std::isfinite(f.value) || f.value < 0) continue;
        const bool link = f.metric == Metric::link_bandwidth;
        Key k{f.metric, &f.peer_class, &f.node, link ? &f.peer : &none, &f.device};
        if (link && *k.b < *k.a) std::swap(k.a, k.b);
        const auto [it, added] = index.try_emplace(k, series.size());
        if (added) series.emplace_back(k, std::vector<TrendPoint>{});
        series[it->second].second.push_back(TrendPoint{f.time, f.value, f.uid, i});
    }
    index.clear();
    for (auto& [k, rows] : series) b.add(SeriesKey{k.metric, *k.cls, *k.a, *k.b, *k.dev}, std::move(rows));
    return b.finish([&](std::uint64_t i) { return figures[i].check_id; });
}

}  // namespace gangway::fleet
