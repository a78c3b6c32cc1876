#include "xid.hpp"

#include <cstdio>

#include "../base/text.hpp"
#include "kmsg_record.hpp"

namespace gangway::health {
std::vector<Xid> parse_kmsg_xids(std::string_view text) {
    std::vector<Xid> out;
    for_each_kmsg_record(text, [&](const KmsgRecord& r) {
        const auto body = kernel_text(r, kXidTag);
        if (!body) return;
        std::string_view rest = *body;
        const auto close = rest.find("): ");
        if (close == std::string_view::npos) return;
        const auto bus = pci_bus_id(rest.substr(0, close));
        if (!bus) return;
        rest.remove_prefix(close + 3);
        std::size_t digits = 0;
        while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
        const auto xid = parse_uint<unsigned>(rest.substr(0, digits));
        if (!xid || (digits < rest.size() && rest[digits] != ',')) return;
        std::string_view tail = rest.substr(digits);
        if (tail.starts_with(", ")) tail.remove_prefix(2);
        out.push_back({r.seq, *bus, *xid, std::string(tail)});
    });
    return out;
}

std::optional<std::uint64_t> last_kmsg_seq(std::string_view text) {
    std::optional<std::uint64_t> last;
    for_each_kmsg_record(text, [&](const KmsgRecord& r) {
        if (!last || r.seq > *last) last = r.seq;
    });
    return last;
}

std::vector<Xid> xids_after(const std::vector<Xid>& xids, std::optional<std::uint64_t> after) {
    std::vector<Xid> out;
    for (const auto& x : xids)
        if (!after || x.seq > *after) out.push_back(x);
    return out;
}

}  // namespace gangway::health
