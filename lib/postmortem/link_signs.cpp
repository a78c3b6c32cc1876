#include "link_signs.hpp"

#include <algorithm>
#include <string>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::postmortem {
namespace {

bool plain_name(std::string_view s) {
    if (s.empty() || s.size() > kMaxDeviceName) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

Evidence sign_at(Sign sign, const std::string& device, std::int64_t code, const std::string& text, std::int64_t t_ns) {
    Evidence e;
    e.t_ns = t_ns;
    e.sign = sign;
    e.device = printable_name(device, kMaxDeviceName);
    e.code = code;
    e.text = printable_name(text, kMaxEvidenceText - 4);
    return e;
}

std::string times(std::uint64_t n) { return n == 1 ? "once" : std::to_string(n) + " times"; }

// Why `s` (the start) and `n` (now) say the link lost carrier during the
// job, or "" when they do not; `grew` the counter's growth. Only a link that
// had carrier at the start: one without (docker0, an unplugged port) may come
// and go with other jobs' containers and carried nothing of this job's then.
std::string lost_carrier(const LinkFacts& s, const LinkFacts& n, std::uint64_t& grew) {
    grew = 0;
    if (!s.carrier) return "";
    std::string how;
    if (s.downs && n.downs) {
        // The kernel counts each loss: the precise answer.
        if (*n.downs > *s.downs) {
            grew = *n.downs - *s.downs;
            how = "lost carrier " + times(grew) + " during the job (carrier_down_count " + std::to_string(*s.downs) +
                  " -> " + std::to_string(*n.downs) + ")";
        }
    } else if (s.changes && n.changes && *n.changes != *s.changes) {
        // From carrier, any change is a loss first. A counter that went back:
        // the interface was made again, which is a change too.
        grew = *n.changes > *s.changes ? *n.changes - *s.changes : 0;
        how = "changed carrier during the job (carrier_changes " + std::to_string(*s.changes) + " -> " +
              std::to_string(*n.changes) + ")";
    }
    if (!n.carrier) {
        const std::string end = !n.admin_up ? "is set down at its end" : "has no carrier at its end";
        how = how.empty() ? "had carrier at the job's start and " + end : how + " and " + end;
    } else if (!how.empty()) {
        how += ", up again at its end";
    }
    return how;
}

}  // namespace

NodeStart node_start(const std::vector<LinkFacts>& links, const std::vector<std::string>& hcas,
                     const std::vector<std::string>& gpus) {
    NodeStart s;
    for (const auto& l : links)
        if (l.addressed && !l.virtual_bridge && plain_name(l.name)) s.links[l.name] = l;
    for (const auto& h : hcas)
        if (plain_name(h)) s.hcas.insert(h);
    for (const auto& g : gpus)
        if (plain_name(g)) s.gpus.insert(g);
    return s;
}

std::string render_node_start(const NodeStart& s) {
    std::string out;
    for (const auto& [name, l] : s.links) {
        out += "link " + name + " admin=" + (l.admin_up ? "1" : "0") + " carrier=" + (l.carrier ? "1" : "0");
        if (l.changes) out += " changes=" + std::to_string(*l.changes);
        if (l.ups) out += " ups=" + std::to_string(*l.ups);
        if (l.downs) out += " downs=" + std::to_string(*l.downs);
        out += "\n";
    }
    for (const auto& h : s.hcas) out += "hca " + h + "\n";
    for (const auto& g : s.gpus) out += "gpu " + g + "\n";
    return out;
}

NodeStart parse_node_start(std::string_view text) {
    NodeStart s;
    for_each_line(text, [&](std::string_view line, std::size_t n) {
        if (n > kMaxNodeStartLines) throw Error("node snapshot: more than " + std::to_string(kMaxNodeStartLines) + " lines");
        auto bad = [n](std::string_view why) {
            return Error("node snapshot: line " + std::to_string(n) + " " + std::string(why));
        };
        std::vector<std::string_view> words;
        for (std::size_t at = 0; at <= line.size();) {
            const auto sp = std::min(line.find(' ', at), line.size());
            if (words.size() == 8) throw bad("has more than 8 words");
            words.push_back(line.substr(at, sp - at));
            at = sp + 1;
        }
        if (words.size() < 2 || !plain_name(words[1]))
            throw bad("is not \"link NAME admin=N carrier=N ...\", \"hca NAME\" or \"gpu BUSID\"");
        const std::string name(words[1]);
        if (words[0] == "hca" || words[0] == "gpu") {
            if (words.size() != 2) throw bad("has words after the " + std::string(words[0]) + "'s name");
            (words[0] == "hca" ? s.hcas : s.gpus).insert(name);
            return;
        }
        if (words[0] != "link") throw bad("starts with \"" + printable_name(words[0], 16) + "\", not link, hca or gpu");
        LinkFacts l;
        l.name = name;
        l.addressed = true;
        bool admin = false, carrier = false;
        for (std::size_t i = 2; i < words.size(); ++i) {
            const auto eq = words[i].find('=');
            const std::string_view key = words[i].substr(0, eq);
            const auto v = eq == std::string_view::npos ? std::nullopt : parse_uint<std::uint64_t>(words[i].substr(eq + 1));
            if (!v) throw bad("has \"" + printable_name(words[i], 24) + "\", not KEY=NUMBER");
            auto set = [&](std::optional<std::uint64_t>& f) {
                if (f) throw bad("has " + std::string(key) + "= twice");
                f = *v;
            };
            if (key == "admin" || key == "carrier") {
                bool& seen = key == "admin" ? admin : carrier;
                if (seen || *v > 1) throw bad("has " + std::string(key) + "= twice or not 0 or 1");
                seen = true;
                (key == "admin" ? l.admin_up : l.carrier) = *v == 1;
            } else if (key == "changes") set(l.changes);
            else if (key == "ups") set(l.ups);
            else if (key == "downs") set(l.downs);
            else throw bad("has the key \"" + printable_name(key, 16) + "\" (admin, carrier, changes, ups, downs)");
        }
        if (!admin || !carrier) throw bad("lacks admin= or carrier=");
        if (!s.links.emplace(name, std::move(l)).second) throw bad("names link " + name + " twice");
    });
    return s;
}

std::vector<Evidence> link_signs(const NodeStart* start, const std::vector<LinkFacts>& now, std::int64_t t_ns,
                                 const std::vector<Evidence>& timed) {
    std::vector<Evidence> out;
    auto add = [&](const std::string& name, std::uint64_t code, const std::string& what) {
        if (out.size() >= kMaxEvidence) return;
        // The kernel's own line for this link keeps its time: no second sign.
        for (const auto& e : timed)
            if (e.sign == Sign::link_down && e.device == name) return;
        out.push_back(sign_at(Sign::link_down, name, static_cast<std::int64_t>(std::min<std::uint64_t>(code, INT64_MAX)),
                              name + " " + what, t_ns));
    };
    if (!start) {
        // No snapshot: the end's state alone, as before, but never a link that never had carrier.
        for (const auto& n : now)
            if (n.addressed && !n.virtual_bridge && n.admin_up && !n.carrier && n.ups.value_or(1) != 0)
                add(n.name, 0, "is up with no carrier at the job's end");
        return out;
    }
    for (const auto& link : start->links) {
        // Not a structured binding: clang before 16 (Debian 12's, the fuzz
        // targets') cannot capture one in a lambda.
        const std::string& name = link.first;
        const auto& s = link.second;
        const auto it = std::find_if(now.begin(), now.end(), [&](const LinkFacts& n) { return n.name == name; });
        if (it == now.end()) {
            if (s.carrier) add(name, 0, "had carrier at the job's start and is gone at its end");
            continue;
        }
        std::uint64_t grew = 0;
        if (const auto how = lost_carrier(s, *it, grew); !how.empty()) add(name, grew, how);
    }
    return out;
}

std::vector<Evidence> device_signs(const NodeStart& start, const std::vector<std::string>& hcas,
                                   const std::vector<std::string>& gpus, std::int64_t t_ns) {
    std::vector<Evidence> out;
    for (const auto& h : start.hcas)
        if (out.size() < kMaxEvidence && std::find(hcas.begin(), hcas.end(), h) == hcas.end())
            out.push_back(sign_at(Sign::hca_lost, h, 0, "RDMA device " + h + " present at the job's start is gone at its end", t_ns));
    for (const auto& g : start.gpus)
        if (out.size() < kMaxEvidence && std::find(gpus.begin(), gpus.end(), g) == gpus.end())
            out.push_back(sign_at(Sign::gpu_lost, g, 0, "GPU " + g + " present at the job's start is gone from the PCI bus at its end", t_ns));
    return out;
}

}  // namespace gangway::postmortem
