#include "outbox.hpp"

#include <algorithm>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::postmortem {
namespace {

constexpr std::string_view kMagic = "gangway-outbox 1\n";
constexpr std::size_t kTimeDigits = 12;

bool one_line(std::string_view v) { return !v.empty() && v.size() <= 4096 && v.find_first_of("\n\r") == std::string_view::npos; }

}  // namespace

std::string render_outbox_entry(const OutboxEntry& e) {
    if (!one_line(e.to) || !one_line(e.key_file) || !one_line(e.node) || e.job == 0)
        throw Error("an outbox entry needs a URL, a key file, a job and a node, each one line");
    std::string s(kMagic);
    s.append("to=").append(e.to).append("\nkey=").append(e.key_file).append("\njob=").append(std::to_string(e.job));
    s.append("\nnode=").append(e.node).append("\n\n").append(e.body);
    return s;
}

OutboxEntry parse_outbox_entry(std::string_view text) {
    if (!text.starts_with(kMagic)) throw Error("not an outbox entry (it does not start with \"gangway-outbox 1\")");
    text.remove_prefix(kMagic.size());
    const auto end = text.find("\n\n");
    if (end == std::string_view::npos) throw Error("an outbox entry without the blank line before its record");
    OutboxEntry e;
    std::string_view head = text.substr(0, end + 1);
    bool to = false, key = false, job = false, node = false;
    while (!head.empty()) {
        const auto nl = head.find('\n');
        const std::string_view line = head.substr(0, nl);
        head.remove_prefix(nl + 1);
        const auto eq = line.find('=');
        const std::string_view k = line.substr(0, eq), v = eq == std::string_view::npos ? std::string_view() : line.substr(eq + 1);
        auto once = [&](bool& seen) {
            if (seen) throw Error("an outbox entry with " + std::string(k) + "= twice");
            if (v.empty()) throw Error("an outbox entry with an empty " + std::string(k) + "=");
            seen = true;
        };
        if (k == "to") once(to), e.to = v;
        else if (k == "key") once(key), e.key_file = v;
        else if (k == "node") once(node), e.node = v;
        else if (k == "job") {
            once(job);
            const auto j = parse_uint<std::uint32_t>(v);
            if (!j || *j == 0) throw Error("an outbox entry's job= \"" + excerpt(v) + "\" is not a job id");
            e.job = *j;
        } else throw Error("an outbox entry with an unknown line \"" + excerpt(line) + "\"");
    }
    if (!to || !key || !job || !node) throw Error("an outbox entry without its to=, key=, job= and node= lines");
    e.body = text.substr(end + 2);
    return e;
}

std::string outbox_name(std::int64_t spooled_s, std::uint32_t job, std::string_view unique) {
    std::string t = std::to_string(std::max<std::int64_t>(spooled_s, 0));
    if (t.size() < kTimeDigits) t.insert(0, kTimeDigits - t.size(), '0');
    return t + "." + std::to_string(job) + "." + std::string(unique);
}

std::optional<OutboxFile> parse_outbox_name(std::string_view name, std::uint64_t bytes) {
    const auto a = name.find('.');
    if (a != kTimeDigits) return std::nullopt;
    const auto b = name.find('.', a + 1);
    if (b == std::string_view::npos) return std::nullopt;
    const std::string_view unique = name.substr(b + 1);
    if (unique.empty() || !std::all_of(unique.begin(), unique.end(), [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        }))
        return std::nullopt;
    const auto t = parse_uint<std::uint64_t>(name.substr(0, a));
    const auto j = parse_uint<std::uint32_t>(name.substr(a + 1, b - a - 1));
    if (!t || !j || *j == 0) return std::nullopt;
    return OutboxFile{std::string(name), static_cast<std::int64_t>(*t), *j, bytes};
}

const char* to_string(Evicted e) {
    switch (e) {
        case Evicted::too_old: return "kept longer than the outbox keeps a record";
        case Evicted::too_many: return "the outbox holds its most records";
        case Evicted::too_big: return "the outbox holds its most bytes";
    }
    return "?";
}

std::vector<Eviction> outbox_evictions(std::vector<OutboxFile> files, std::int64_t now_s, const OutboxLimits& l,
                                       std::optional<std::uint64_t> adding) {
    std::sort(files.begin(), files.end(), [](const OutboxFile& x, const OutboxFile& y) {
        return x.spooled_s != y.spooled_s ? x.spooled_s < y.spooled_s : x.name < y.name;
    });
    std::vector<Eviction> out;
    std::size_t count = files.size() + (adding ? 1 : 0);
    std::uint64_t bytes = adding.value_or(0);
    for (const auto& f : files) bytes += f.bytes;
    for (const auto& f : files) {
        Evicted why;
        if (now_s - f.spooled_s > l.max_age_s) why = Evicted::too_old;
        else if (count > l.max_records) why = Evicted::too_many;
        else if (bytes > l.max_bytes) why = Evicted::too_big;
        else continue;
        out.push_back({f, why});
        --count;
        bytes -= f.bytes;
    }
    return out;
}

Delivery delivery_of(unsigned status) {
    if (status >= 200 && status < 300) return Delivery::delivered;
    if (status == 400 || status == 403 || status == 409 || status == 413) return Delivery::refused;
    return Delivery::retry;
}

}  // namespace gangway::postmortem
