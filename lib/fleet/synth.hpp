// A synthetic fleet history for the trend tests and benchmarks: deterministic
// from a seed, one day at a time (a test can slide a window over a year
// without holding the year), with the faults issue 25 asks the trends to
// tell apart: a node losing a fraction a day, a link losing bandwidth, and
// one user's jobs reporting a healthy node as slow. Pure; its random numbers
// are its own (splitmix64), so that every platform draws the same history.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"

namespace gangway::fleet {

struct SynthSettings {
    std::uint64_t seed = 1;
    std::size_t nodes = 256;
    std::int64_t start = 1767225600;  // 2026-01-01T00:00:00Z, day 0
    // Root node checks (gpu_h2d of each node's one GPU), every 3 hours.
    unsigned node_checks_per_day = 8;
    // Job checks: a run of 2 to max_job_nodes nodes in name order (as SLURM
    // gives them), each node's tcp_send and gpu_h2d and both directions of
    // every ring link (i -> i+1 and the closing last -> first).
    unsigned jobs_per_day = 130;
    std::size_t max_job_nodes = 32;
    std::vector<std::uint32_t> users{1001, 1002, 1003, 1004, 1005, 1006};
    double sigma = 0.05;  // normal noise on every figure, as a fraction...
    double clip = 0.10;   // ...clipped to +-10 %
    // Fault 1: this node's gpu_h2d loses `node_loss` a day (compounded) from `node_from_day`.
    std::size_t degrading_node = 17;
    int node_from_day = 120;
    double node_loss = 0.01;
    // Fault 2: the link between these nodes (both directions) loses `link_loss` a day from `link_from_day`.
    std::size_t link_a = 100, link_b = 101;
    int link_from_day = 200;
    double link_loss = 0.02;
    // Fault 3: every job of `liar_uid` (one of `users`) reports `liar_node` at
    // `liar_factor` of its figures (gpu_h2d, tcp_send, its links), and that
    // user runs `liar_jobs_per_day` extra jobs that include it, from `liar_from_day`.
    std::uint32_t liar_uid = 1006;
    int liar_from_day = 250;
    std::size_t liar_node = 42;
    double liar_factor = 0.6;
    unsigned liar_jobs_per_day = 20;
    bool faults = true;  // false: a healthy fleet and honest users only
};

// The nominal figures (bytes per second).
inline constexpr double kSynthGpuH2d = 25e9, kSynthTcpSend = 12.5e9, kSynthLink = 12e9;

// "n000", "n001", ...: the name of node i.
std::string synth_node_name(std::size_t i);

// The figures of day `day` (0-based), in no particular order; the same for
// the same settings and day.
std::vector<Figure> synth_day(const SynthSettings& s, int day);

}  // namespace gangway::fleet
