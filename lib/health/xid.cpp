#include "xid.hpp"

#include <cctype>

#include "../base/text.hpp"

namespace gangway::health {

std::vector<Xid> parse_kmsg_xids(std::string_view text) {
    std::vector<Xid> out;
    for (const auto& line : split_nonempty(text, '\n')) {
        if (line[0] == ' ') continue;
        const auto semi = line.find(';');
        if (semi == std::string::npos) continue;
        const auto head = split_keep_empty(std::string_view(line).substr(0, semi), ',');
        if (head.size() < 3) continue;
        const auto seq = parse_uint<std::uint64_t>(head[1]);
        if (!seq) continue;
        const std::string_view msg = std::string_view(line).substr(semi + 1);
        constexpr std::string_view tag = "NVRM: Xid (PCI:";
        const auto at = msg.find(tag);
        if (at == std::string_view::npos) continue;
        std::string_view rest = msg.substr(at + tag.size());
        const auto close = rest.find("): ");
        if (close == std::string_view::npos) continue;
        std::string bus(rest.substr(0, close));
        rest.remove_prefix(close + 3);
        std::size_t digits = 0;
        while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
        const auto xid = parse_uint<unsigned>(rest.substr(0, digits));
        if (!xid) continue;
        for (auto& c : bus) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        // The driver names the device without its function: "0000:17:00".
        if (bus.find('.') == std::string::npos) bus += ".0";
        std::string tail(rest.substr(digits));
        if (tail.starts_with(", ")) tail.erase(0, 2);
        out.push_back({*seq, bus, *xid, tail});
    }
    return out;
}

std::optional<std::uint64_t> last_kmsg_seq(std::string_view text) {
    std::optional<std::uint64_t> last;
    for (const auto& line : split_nonempty(text, '\n')) {
        if (line[0] == ' ') continue;
        const auto head = split_keep_empty(std::string_view(line).substr(0, line.find(';')), ',');
        if (head.size() < 3) continue;
        if (const auto seq = parse_uint<std::uint64_t>(head[1]); seq && (!last || *seq > *last)) last = seq;
    }
    return last;
}

std::vector<Xid> xids_after(const std::vector<Xid>& xids, std::optional<std::uint64_t> after) {
    std::vector<Xid> out;
    for (const auto& x : xids)
        if (!after || x.seq > *after) out.push_back(x);
    return out;
}

}  // namespace gangway::health
