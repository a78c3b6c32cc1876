#include "rank_dump.hpp"

#include <nlohmann/json.hpp>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::postmortem {
namespace {

std::vector<std::uint64_t> seqs(const nlohmann::json& j, const char* key) {
    std::vector<std::uint64_t> out;
    if (!j.contains(key)) return out;
    const auto& a = j.at(key);
    if (!a.is_array()) throw Error(std::string("a rank dump's \"") + key + "\" is not a list of numbers");
    if (a.size() > kMaxSeqs)
        throw Error(std::string("a rank dump's \"") + key + "\" holds " + std::to_string(a.size()) + " numbers, more than " +
                    std::to_string(kMaxSeqs));
    for (const auto& v : a) {
        if (!v.is_number_unsigned()) throw Error(std::string("a rank dump's \"") + key + "\" holds something else than a sequence number");
        out.push_back(v.get<std::uint64_t>());
    }
    return out;
}

}  // namespace

RankDump parse_rank_dump(std::string_view text) {
    if (text.size() > kMaxRankDumpBytes)
        throw Error("a rank dump of " + std::to_string(text.size()) + " bytes, more than " + size_text(kMaxRankDumpBytes));
    // The tree is kept small as it is built: two levels (the object, its
    // lists) and the values two full lists hold, whatever the text holds.
    std::size_t values = 0;
    const nlohmann::json::parser_callback_t bound = [&](int depth, nlohmann::json::parse_event_t ev, nlohmann::json&) {
        if (depth > 2) throw Error("a rank dump nested deeper than its lists");
        if (ev == nlohmann::json::parse_event_t::value && ++values > 2 * kMaxSeqs + 64)
            throw Error("a rank dump of more than " + std::to_string(2 * kMaxSeqs + 64) + " values");
        return true;
    };
    const auto j = nlohmann::json::parse(text.begin(), text.end(), bound, false);
    if (j.is_discarded() || !j.is_object() || j.value("kind", std::string()) != "gangway-rank-dump")
        throw Error("not a gangway rank dump (a JSON object with \"kind\":\"gangway-rank-dump\")");
    const auto rank = j.find("rank");
    if (rank == j.end() || !rank->is_number_unsigned() || rank->get<std::uint64_t>() > 0xffffffffu)
        throw Error("a rank dump without a rank");
    RankDump d;
    d.rank = static_cast<std::uint32_t>(rank->get<std::uint64_t>());
    d.entered = seqs(j, "entered");
    d.completed = seqs(j, "completed");
    if (const auto e = j.find("exception"); e != j.end() && e->is_string())
        d.exception = printable_name(e->get<std::string>(), kMaxRecordString - 8);
    return d;
}

}  // namespace gangway::postmortem
