#include "points.hpp"

#include <algorithm>
#include <cstring>

namespace gangway::sys::fleet {

void append_point(std::string& blob, const StoredPoint& p, std::int64_t day_start) {
    char b[kPointBytes];
    const std::uint32_t when = static_cast<std::uint32_t>(p.time - day_start) |
                               (p.source == gangway::fleet::Source::job_check ? kPointHighBit : 0);
    const std::uint32_t check = p.folded ? (kPointHighBit | (p.count & ~kPointHighBit)) : p.check;
    std::memcpy(b, &p.value, 8);
    std::memcpy(b + 8, &p.series, 4);
    std::memcpy(b + 12, &p.uid, 4);
    std::memcpy(b + 16, &when, 4);
    std::memcpy(b + 20, &check, 4);
    blob.append(b, sizeof b);
}

void decode_points(std::string_view blob, std::int64_t day_start, std::vector<StoredPoint>& out) {
    // Room for the row's points, growing geometrically: a reader decodes a
    // node's rows one after another into one vector, and an exact reserve per
    // row moved every point decoded so far once per row (a node's 30 days:
    // 30 moves of a growing vector).
    const std::size_t need = out.size() + blob.size() / kPointBytes;
    if (need > out.capacity()) out.reserve(std::max(need, 2 * out.capacity()));
    for (std::size_t at = 0; at + kPointBytes <= blob.size(); at += kPointBytes) {
        const char* b = blob.data() + at;
        StoredPoint p;
        std::uint32_t when = 0, check = 0;
        std::memcpy(&p.value, b, 8);
        std::memcpy(&p.series, b + 8, 4);
        std::memcpy(&p.uid, b + 12, 4);
        std::memcpy(&when, b + 16, 4);
        std::memcpy(&check, b + 20, 4);
        p.source = (when & kPointHighBit) ? gangway::fleet::Source::job_check : gangway::fleet::Source::node_check;
        p.time = day_start + (when & ~kPointHighBit);
        p.folded = (check & kPointHighBit) != 0;
        p.check = p.folded ? 0 : check;
        p.count = p.folded ? (check & ~kPointHighBit) : 1;
        out.push_back(p);
    }
}

}  // namespace gangway::sys::fleet
