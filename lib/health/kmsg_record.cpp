#include "kmsg_record.hpp"

namespace gangway::health {

std::optional<KmsgRecord> parse_kmsg_record(std::string_view line) {
    const auto semi = line.find(';');
    if (line.empty() || line[0] == ' ' || semi == std::string_view::npos) return std::nullopt;
    // PRIO,SEQ,USEC,FLAGS and, in newer kernels, more fields (caller=T42).
    const std::string_view head = line.substr(0, semi);
    const auto c1 = head.find(',');
    if (c1 == std::string_view::npos) return std::nullopt;
    const auto c2 = head.find(',', c1 + 1);
    if (c2 == std::string_view::npos) return std::nullopt;
    const auto prio = parse_uint<std::uint32_t>(head.substr(0, c1));
    const auto seq = parse_uint<std::uint64_t>(head.substr(c1 + 1, c2 - c1 - 1));
    if (!prio || !seq) return std::nullopt;
    const auto c3 = head.find(',', c2 + 1);
    const auto usec = parse_uint<std::uint64_t>(head.substr(c2 + 1, c3 == std::string_view::npos ? c3 : c3 - c2 - 1));
    return KmsgRecord{*prio >> 3, *prio & 7, *seq, line.substr(semi + 1), usec.value_or(0)};
}

std::optional<std::string_view> kernel_text(const KmsgRecord& r, std::string_view tag) {
    if (r.facility != 0 || !r.message.starts_with(tag)) return std::nullopt;
    return r.message.substr(tag.size());
}

KmsgLoss kmsg_lost(std::string_view records, std::optional<std::uint64_t> after) {
    KmsgLoss loss;
    std::optional<std::uint64_t> next;  // the sequence number the next record should have
    if (after && *after < UINT64_MAX) next = *after + 1;
    for_each_kmsg_record(records, [&](const KmsgRecord& r) {
        if (next && r.seq > *next) {
            if (loss.records == 0) loss.first = *next;
            loss.records += r.seq - *next;
            loss.last = r.seq - 1;
        }
        if (!next || r.seq >= *next) next = r.seq < UINT64_MAX ? std::optional(r.seq + 1) : std::nullopt;
    });
    return loss;
}

}  // namespace gangway::health
