// PCIe links against their maximum: the lower of both ends' capability, so a
// Gen5 GPU in a Gen4 slot is at its maximum, and one trained at x8 in an x16
// slot is not.
#include <algorithm>

#include "judge.hpp"

namespace gangway::health {
namespace {

// The smaller of two known values; the known one alone; `unknown` when neither.
int lower_known(int a, int b, int unknown) {
    if (a > unknown && b > unknown) return std::min(a, b);
    return a > unknown ? a : b;
}

}  // namespace

std::vector<Record> judge_link(const std::string& label, const PciDevice& d, const std::string& speed_skip) {
    std::vector<Record> out;
    const LinkEnd& l = d.link;
    const int max_width = lower_known(l.max_width, d.upstream ? d.upstream->max_width : -1, -1);
    Record w{Check::pcie_width, label, l.cur_width >= 0 ? std::to_string(l.cur_width) : "", "lanes",
             max_width >= 0 ? std::to_string(max_width) : "", Status::ok, "", false};
    if (l.cur_width < 0 || max_width <= 0) {
        w.status = Status::skipped;
        w.reason = "sysfs gives no link width";
    } else if (l.cur_width == 0) {
        w.status = Status::failed;
        w.reason = label + " PCIe link down (x0 of x" + w.expected + ")";
    } else if (l.cur_width < max_width) {
        w.status = Status::failed;
        w.reason = label + " PCIe x" + w.figure + " of x" + w.expected;
    }
    out.push_back(std::move(w));
    const int max_gen = lower_known(l.max_gen, d.upstream ? d.upstream->max_gen : 0, 0);
    Record s{Check::pcie_speed, label, l.cur_gen ? std::to_string(l.cur_gen) : "", "gen",
             max_gen ? std::to_string(max_gen) : "", Status::ok, "", false};
    if (!speed_skip.empty()) {
        s.status = Status::skipped;
        s.reason = speed_skip;
    } else if (!l.cur_gen || !max_gen) {
        s.status = Status::skipped;
        s.reason = "sysfs gives no link speed";
    } else if (l.cur_gen < max_gen) {
        s.status = Status::failed;
        s.reason = label + " PCIe Gen" + s.figure + " of Gen" + s.expected;
    }
    out.push_back(std::move(s));
    return out;
}

}  // namespace gangway::health
