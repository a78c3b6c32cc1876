// The fleet's trends (issue 25, item 4): from the figures the store keeps,
// for every node figure (node, device, metric) and every link (the two nodes,
// either direction: both ends' figures count), a baseline from its own
// history and one from its peers of the same kind (same metric, same
// peer_class, same recent window), the noise the fleet shows, and a flag
// `degrading` when the recent figures lie below both by more than that noise.
// Pure: figures and a time in, rows and flags out; nothing here reads a clock
// or a file.
//
// The rule (gangway-fleet(8) says the same):
//   recent    the median of a series' figures in [now - recent_s, now]
//   baseline  the median of its figures in [now - history_s, now - recent_s)
//   vouched   what a series gives its class's statistics (peers, noise,
//             typical): the median of its recent figures and of its history,
//             each only when a root node check or the job checks of at least
//             two users are among those figures. A series that only one user
//             reports (a node that does not exist, or one no root check and
//             no second user measured) is judged like any other, but shapes
//             no other series' line (issue 31).
//   peers     the median of the vouched recent medians of the other series
//             of its class (metric and peer_class)
//   noise     per class, 1.4826 x the MAD of recent/baseline over the class's
//             vouched series (noise_own) and of recent/peers (noise_peers):
//             the spread of a healthy series' recent median, as a fraction
//   line      min(baseline x (1 - t_own), peers x (1 - t_peers)) with
//             t = max(min_margin, k x noise x sqrt(typical / n)): a series
//             with n recent figures, fewer than the class's typical (median)
//             number (over its vouched series), has a noisier median, by
//             sqrt(typical / n)
//   degrading recent < line, and it still holds with any one user's job
//             figures taken out of the recent window and of the history
//             (so one user can neither pull a node's recent figures down nor
//             push its baseline up), and the figures below the line include a
//             root node check or job checks of at least two users.
// A series needs min_recent recent figures, min_baseline history figures and
// a class of at least min_peers other vouched series to be judged; otherwise its row
// shows what is known and it is never flagged.
//
// Cost: one sort of the figures in the window (O(n log n)), then linear work
// per series and per class. Figures outside the window are skipped before
// the sort.
//
// Memory (issue 34, item 1): TrendBuilder takes the figures one series at a
// time and keeps of each only its summary (the medians, the counts, the
// newest figure), plus the figures of the few series that can still be
// flagged: those whose recent median is below their baseline by more than
// min_margin (no noise can make the line closer than that). So a reader
// that streams the store series by series holds O(series), not O(figures).
// compute_trends below is the same builder fed from a vector, so both paths
// give the same answers by construction.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model.hpp"

namespace gangway::fleet {

struct TrendSettings {
    std::int64_t recent_s = 3 * 86400;    // the recent window
    std::int64_t history_s = 30 * 86400;  // the whole window, recent included
    std::size_t min_recent = 3;           // recent figures a series needs to be judged
    std::size_t min_baseline = 10;        // history figures a series needs for its own baseline
    std::size_t min_peers = 4;            // other series of the class with a recent median
    double k = 4;                         // how many noises below both baselines
    double min_margin = 0.03;             // never flag less than 3 % below either
};

// Evidence kept in a flag: the newest this many check ids.
inline constexpr std::size_t kFlagMaxChecks = 32;

// One series (a node's figure of one metric and device, or a link) as judged at `now`.
struct SeriesTrend {
    std::string node, peer, device, peer_class;  // a link: node < peer by name
    Metric metric = Metric::tcp_send;
    std::size_t recent_n = 0, baseline_n = 0;
    double last = 0;                             // the newest figure in the window
    std::int64_t last_time = 0;
    std::optional<double> recent, baseline, peers;
    double t_own = 0, t_peers = 0;               // the thresholds used (fractions); 0 when not judged
    bool degrading = false;

    // recent / baseline - 1 (e.g. -0.08: 8 % below its own history), when both are known.
    std::optional<double> change() const;
};

// The noise of one class, for the table's footer and the plots.
struct ClassNoise {
    Metric metric = Metric::tcp_send;
    std::string peer_class;
    std::size_t series = 0;          // vouched series with a recent median (the class's statistics' sample)
    std::size_t typical_recent_n = 0;  // the median number of vouched recent figures of those series
    double noise_own = 0, noise_peers = 0;
};

struct TrendResult {
    std::vector<SeriesTrend> series;  // by node, metric, device, peer
    std::vector<Flag> flags;          // by node, metric, device, peer
    std::vector<ClassNoise> classes;  // by metric, peer_class
};

// Throws gangway::Error on settings that make no sense (a recent window not
// inside the history window, k or the margin negative).
TrendResult compute_trends(const std::vector<Figure>& figures, std::int64_t now, const TrendSettings& s = {});

// One figure as the trends read it: no names (its series says them).
struct TrendPoint {
    std::int64_t time = 0;
    double value = 0;
    std::uint32_t uid = 0;
    std::uint64_t check = 0;  // the caller's handle for its check: named by finish()'s check_id, for evidence only
};

// A series' identity: a link's two nodes in name order (node < peer), so
// that both directions' figures are one series.
struct SeriesKey {
    Metric metric = Metric::tcp_send;
    std::string peer_class, node, peer, device;
};

// The trends, one series at a time (see Memory above).
class TrendBuilder {
public:
    // Throws gangway::Error on settings that make no sense (as compute_trends).
    TrendBuilder(std::int64_t now, const TrendSettings& s = {});
    TrendBuilder(TrendBuilder&&) noexcept;
    TrendBuilder& operator=(TrendBuilder&&) noexcept;
    ~TrendBuilder();
    // One series, all its figures (any order; ties in time keep the order
    // given; those outside [now - history_s, now], not finite or negative
    // are skipped). Each series once.
    void add(SeriesKey key, std::vector<TrendPoint> points);
    // The classes' statistics and the judgements. `check_id` names a point's
    // check for a flag's evidence (called only for flagged series).
    TrendResult finish(const std::function<std::string(std::uint64_t)>& check_id);

private:
    struct State;
    std::unique_ptr<State> st_;
};

}  // namespace gangway::fleet
