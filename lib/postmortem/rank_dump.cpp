#include "rank_dump.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

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

// A group's "timed": [[seq, time_created_ns, time_discovered_started_ns,
// time_discovered_completed_ns], ...], a time null or absent as 0.
std::vector<RankDump::Timed> timed_rows(const nlohmann::json& g) {
    std::vector<RankDump::Timed> out;
    const auto a = g.find("timed");
    if (a == g.end()) return out;
    if (!a->is_array()) throw Error("a rank dump's \"timed\" is not a list of collectives");
    if (a->size() > kMaxTimed)
        throw Error("a rank dump's \"timed\" holds " + std::to_string(a->size()) + " collectives, more than " + std::to_string(kMaxTimed));
    for (const auto& row : *a) {
        if (!row.is_array() || row.size() < 2 || row.size() > 4 || !row[0].is_number_unsigned())
            throw Error("a rank dump's \"timed\" holds something else than [seq, entered_ns, started_ns, completed_ns]");
        std::int64_t t[3] = {0, 0, 0};
        for (std::size_t i = 1; i < row.size(); ++i) {
            if (row[i].is_null()) continue;
            if (!row[i].is_number_unsigned() || row[i].get<std::uint64_t>() > std::uint64_t(INT64_MAX))
                throw Error("a rank dump's \"timed\" holds a time that is not a whole number of nanoseconds");
            t[i - 1] = std::int64_t(row[i].get<std::uint64_t>());
        }
        out.push_back({row[0].get<std::uint64_t>(), t[0], t[1], t[2]});
    }
    return out;
}

}  // namespace

std::vector<RankDump> parse_rank_dump(std::string_view text) {
    if (text.size() > kMaxRankDumpBytes)
        throw Error("a rank dump of " + std::to_string(text.size()) + " bytes, more than " + size_text(kMaxRankDumpBytes));
    // The tree is kept small as it is built: at most the groups' level below
    // the object, and the values two full lists hold in all, whatever the text
    // holds (the hook keeps its 4,000 newest entries, every group together,
    // and each group's kMaxTimed newest times: a row and its 4 numbers).
    // Lists and objects are counted apart (a tree's list costs more than a
    // number): the root, the groups' object, each group's and its 3 lists, and
    // the timed rows.
    std::size_t values = 0, containers = 0;
    constexpr std::size_t kMaxValues = 2 * kMaxSeqs + 64 + 4 * kMaxGroups + 5 * kMaxTimedRows;
    constexpr std::size_t kMaxContainers = 8 + 4 * kMaxGroups + kMaxTimedRows;
    const nlohmann::json::parser_callback_t bound = [&](int depth, nlohmann::json::parse_event_t ev, nlohmann::json&) {
        if (depth > 5) throw Error("a rank dump nested deeper than its groups' timed collectives");
        if (ev == nlohmann::json::parse_event_t::value && ++values > kMaxValues)
            throw Error("a rank dump of more than " + std::to_string(kMaxValues) + " values");
        if ((ev == nlohmann::json::parse_event_t::object_start || ev == nlohmann::json::parse_event_t::array_start) &&
            ++containers > kMaxContainers)
            throw Error("a rank dump of more than " + std::to_string(kMaxContainers) + " lists and objects");
        return true;
    };
    const auto j = nlohmann::json::parse(text.begin(), text.end(), bound, false);
    // "kind" a string of that text: json::value() throws its own type_error for a
    // kind of another type (found by tests/fuzz/postmortem: {"kind":2,...}).
    const auto kind = j.is_object() ? j.find("kind") : j.end();
    if (j.is_discarded() || !j.is_object() || kind == j.end() || !kind->is_string() || kind->get<std::string>() != "gangway-rank-dump")
        throw Error("not a gangway rank dump (a JSON object with \"kind\":\"gangway-rank-dump\")");
    const auto rank = j.find("rank");
    if (rank == j.end() || !rank->is_number_unsigned() || rank->get<std::uint64_t>() > 0xffffffffu)
        throw Error("a rank dump without a rank");
    RankDump d;
    d.rank = static_cast<std::uint32_t>(rank->get<std::uint64_t>());
    if (const auto e = j.find("exception"); e != j.end() && e->is_string())
        d.exception = printable_name(e->get<std::string>(), kMaxRecordString - 8);
    std::vector<RankDump> out;
    const auto groups = j.find("groups");
    if (groups == j.end()) {  // schema 1: one list of every group's numbers
        d.entered = seqs(j, "entered");
        d.completed = seqs(j, "completed");
        out.push_back(std::move(d));
        return out;
    }
    if (!groups->is_object()) throw Error("a rank dump's \"groups\" is not an object of process groups");
    if (groups->size() > kMaxGroups)
        throw Error("a rank dump of " + std::to_string(groups->size()) + " process groups, more than " + std::to_string(kMaxGroups));
    std::size_t timed = 0;
    for (const auto& [name, g] : groups->items()) {
        if (!g.is_object()) throw Error("a rank dump's group \"" + excerpt(name) + "\" is not an object");
        if (name.empty() || name.size() > kMaxGroupName || printable_name(name, kMaxGroupName) != name)
            throw Error("a rank dump's group name \"" + excerpt(name) + "\" is not 1 to " + std::to_string(kMaxGroupName) +
                        " printable bytes");
        RankDump one = d;
        one.group = name;
        one.entered = seqs(g, "entered");
        one.completed = seqs(g, "completed");
        one.timed = timed_rows(g);
        if ((timed += one.timed.size()) > kMaxTimedRows)
            throw Error("a rank dump of more than " + std::to_string(kMaxTimedRows) + " timed collectives in all its groups");
        out.push_back(std::move(one));
    }
    if (out.empty()) out.push_back(std::move(d));  // no collective in any group: the exception still counts
    return out;
}

}  // namespace gangway::postmortem
