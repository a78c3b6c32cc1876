// A node's card as the unit tests build it: node<rank>, data address
// 10.0.0.<rank+1> on eth1 (up, at `rate_mbps`), its GPUs and NCCL version.
#pragma once
#include <string>

#include "../../lib/preflight/card.hpp"

inline gangway::preflight::Card test_card(unsigned rank, unsigned gpus, long rate_mbps, const std::string& nccl) {
    gangway::preflight::Card c;
    c.node_rank = rank;
    c.node = "node" + std::to_string(rank);
    c.data_iface = "eth1";
    c.data_addr = "10.0.0." + std::to_string(rank + 1);
    c.gpus = gpus;
    c.nics.push_back({"eth1", "net", "up", rate_mbps, {c.data_addr}});
    c.versions = {{"nccl", nccl}, {"kernel", "6." + std::to_string(rank)}};
    return c;
}
