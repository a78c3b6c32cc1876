#include "card.hpp"

#include <algorithm>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::preflight {

void card_to_kv(const Card& c, Kv& out) {
    out["card.node_rank"] = std::to_string(c.node_rank);
    out["card.node"] = c.node;
    out["card.hostname"] = c.hostname;
    out["card.data_iface"] = c.data_iface;
    out["card.data_addr"] = c.data_addr;
    out["card.data_port"] = std::to_string(c.data_port);
    out["card.gpus"] = std::to_string(c.gpus);
    for (const auto& [k, v] : c.versions) out["card.version." + k] = v;
    // The NICs while the card stays under kMaxCardBytes (a hello must fit
    // kMaxFirstFrame): a node with more interfaces than that lists the first.
    std::size_t size = encode_kv(out).size(), kept = 0;
    for (std::size_t i = 0; i < c.nics.size(); ++i) {
        const auto p = "card.nic." + std::to_string(i) + ".";
        const auto& n = c.nics[i];
        const Kv one{{p + "name", n.name}, {p + "kind", n.kind}, {p + "state", n.state},
                     {p + "rate_mbps", std::to_string(n.rate_mbps)}, {p + "addrs", join(n.addrs, ",")}};
        size += encode_kv(one).size();
        if (size > kMaxCardBytes) break;
        out.insert(one.begin(), one.end());
        ++kept;
    }
    out["card.nics"] = std::to_string(kept);
}

Card card_from_kv(const Kv& kv) {
    Card c;
    c.node_rank = static_cast<unsigned>(kv_u64(kv, "card.node_rank"));
    c.node = kv_str(kv, "card.node");
    c.hostname = kv_str(kv, "card.hostname");
    c.data_iface = kv_str(kv, "card.data_iface");
    c.data_addr = kv_str(kv, "card.data_addr");
    const auto port = kv_u64(kv, "card.data_port");
    if (port > 65535) throw Error("malformed card: port out of range");
    c.data_port = static_cast<unsigned>(port);
    c.gpus = static_cast<unsigned>(std::min<std::uint64_t>(kv_u64(kv, "card.gpus"), 1u << 20));
    const auto nics = kv_u64(kv, "card.nics");
    if (nics > 4096) throw Error("malformed card: too many NICs");
    for (std::uint64_t i = 0; i < nics; ++i) {
        const auto p = "card.nic." + std::to_string(i) + ".";
        Nic n;
        n.name = kv_str(kv, p + "name");
        n.kind = kv_str(kv, p + "kind");
        n.state = kv_str(kv, p + "state");
        const auto r = kv_str(kv, p + "rate_mbps");
        const auto rate = parse_int<long>(r);
        if (!rate) throw Error("malformed card: NIC rate \"" + r + "\"");
        n.rate_mbps = *rate;
        n.addrs = split_nonempty(kv_str(kv, p + "addrs"), ',');
        c.nics.push_back(std::move(n));
    }
    const std::string vp = "card.version.";
    for (auto it = kv.lower_bound(vp); it != kv.end() && it->first.compare(0, vp.size(), vp) == 0; ++it)
        c.versions[it->first.substr(vp.size())] = it->second;
    return c;
}

const Nic* find_nic(const Card& c, const std::string& name) {
    for (const auto& n : c.nics)
        if (n.name == name) return &n;
    return nullptr;
}

std::vector<Nic> card_nics(std::vector<Nic> all, const std::string& data_iface) {
    std::erase_if(all, [&](const Nic& n) { return n.kind != "ib" && n.name != data_iface; });
    return all;
}

namespace {

// values[i] is card i's value (nullopt-like empty optional = not applicable).
void majority(const std::vector<Card>& cards, const std::string& what,
              const std::vector<std::pair<bool, std::string>>& values, std::vector<Mismatch>& out) {
    std::map<std::string, std::pair<unsigned, std::size_t>> count;  // value -> (votes, first index)
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!values[i].first) continue;
        auto [it, fresh] = count.try_emplace(values[i].second, 0u, i);
        it->second.first++;
    }
    if (count.size() < 2) return;
    std::string ref;
    unsigned best = 0;
    std::size_t best_first = 0;
    for (const auto& [v, cf] : count)
        if (cf.first > best || (cf.first == best && cf.second < best_first)) {
            ref = v;
            best = cf.first;
            best_first = cf.second;
        }
    for (std::size_t i = 0; i < values.size(); ++i)
        if (values[i].first && values[i].second != ref) out.push_back({cards[i].node_rank, what, values[i].second, ref});
}

}  // namespace

std::vector<Mismatch> compare_cards(const std::vector<Card>& cards) {
    std::vector<Mismatch> out;
    std::vector<std::pair<bool, std::string>> v;
    for (const auto& c : cards) v.emplace_back(true, std::to_string(c.gpus));
    majority(cards, "gpus", v, out);

    // Rates of the data interface and of every IB port, by name.
    std::vector<std::string> names;
    for (const auto& c : cards)
        for (const auto& n : c.nics)
            if ((n.kind == "ib" || n.name == c.data_iface) && std::find(names.begin(), names.end(), n.name) == names.end())
                names.push_back(n.name);
    for (const auto& name : names) {
        v.clear();
        for (const auto& c : cards) {
            const Nic* n = find_nic(c, name);
            v.emplace_back(n && n->rate_mbps > 0, n ? std::to_string(n->rate_mbps) + " Mb/s" : "");
        }
        majority(cards, "nic rate " + name, v, out);
    }
    std::vector<std::string> keys;
    for (const auto& c : cards)
        for (const auto& [k, _] : c.versions)
            // rank_order: a difference is no finding; the coordinator makes
            // every task keep SLURM's order instead (lib/env/rank_order.hpp).
            if (k != "kernel" && k != "rank_order" && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    for (const auto& k : keys) {
        v.clear();
        for (const auto& c : cards) {
            auto it = c.versions.find(k);
            v.emplace_back(true, it == c.versions.end() ? "none" : it->second);
        }
        majority(cards, "version " + k, v, out);
    }
    return out;
}

}  // namespace gangway::preflight
