// Message types of the preflight's control and data connections.
#pragma once
#include <cstdint>

namespace gangway::preflight {

enum Msg : std::uint8_t {
    kHello = 1,        // task -> coordinator: rank, node_rank, local, speaker, card.*
    kWelcome = 2,      // coordinator -> task: everyone checked in (or the deadline passed)
    kReach = 3,        // coordinator -> speaker: probe these peers
    kReachResult = 4,  // speaker -> coordinator
    kBw = 5,           // coordinator -> speaker: send to / receive from in this round
    kBwResult = 6,     // speaker -> coordinator
    kVerdict = 7,      // coordinator -> task: the verdict and what to do
    kData = 8,         // peer -> peer on a data connection: who I am and what for
    kProbeOk = 9,      // peer -> peer: probe answered
    kLocal = 10,       // coordinator -> speaker: run this node's GPU and RDMA stages
    kLocalResult = 11, // speaker -> coordinator: their results
    kNccl = 12,        // coordinator -> speaker: phase id (make a unique id) or run (join the all-reduce)
    kNcclResult = 13,  // speaker -> coordinator
    kRdma = 14,        // coordinator -> speaker: phase prep, connect, go or done of an RDMA write round
    kRdmaResult = 15,  // speaker -> coordinator
};

}  // namespace gangway::preflight
