// A TCP bandwidth round's link (kBw): what its receiver counted, unless its
// sender says the stream failed. Plain data in (both ends' answers), a
// Measurement out; the coordinator (lib/sys/preflight/coordinator.cpp)
// sends the rounds.
#pragma once
#include <string>

#include "localize.hpp"
#include "schedule.hpp"
#include "wire.hpp"

namespace gangway::preflight {

struct StreamEnd {
    std::string node;            // its name, for "no answer from"
    const Kv* answer = nullptr;  // its kBwResult (rx_ok, rx_bps, rx_error, tx_ok, tx_error); null: none came
};

// The receiver's rx_* figures; failed, with "sender: <tx_error>" first, when
// the sender answered that its stream failed (a sender without an answer
// leaves the receiver's word). No answer from the receiver, or a malformed
// one, is the link's failure, with that as its error: it never throws.
Measurement stream_link(const Flow& f, const StreamEnd& sender, const StreamEnd& receiver);

}  // namespace gangway::preflight
