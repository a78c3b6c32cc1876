// The rendezvous port of a job step, chosen with no communication so that
// every node of the step computes the same one.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace gangway {

struct PortRange {
    std::uint16_t lo = 61000;  // above Linux's default ephemeral range (32768-60999)
    std::uint16_t hi = 65535;
};

// Ports are handed out in blocks of this size so that frameworks that use
// PORT+1 and PORT+2 (Megatron, DeepSpeed) stay inside the step's block.
inline constexpr unsigned kPortBlock = 4;

// SLURM_STEP_RESV_PORTS ("12000-12003" or "12000,12005"): its first port, or
// nullopt when the string is empty. Throws gangway::Error when malformed.
std::optional<std::uint16_t> first_reserved_port(std::string_view resv_ports);

// Whether SLURM_STEP_RESV_PORTS ("12000-12003,12010") names `port`; false
// when the string is empty. The whole list is checked: throws gangway::Error
// when any item is malformed.
//
// Cost (SECURITY.md, "What a parser may spend"): one pass over the list, O(n)
// work, and no memory but a refusal's message: nothing is materialised per
// item or per port (a std::set built item by item took minutes for 64 KB of
// "12000-65535,", issue 23, item 3).
bool is_reserved_port(std::string_view resv_ports, unsigned port);

// The launcher's rendezvous port: PRIMARY_PORT+1 (the port every task can
// compute alone). When the step has reserved ports it must be one of them: the
// launcher binds no port SLURM gave no one, or another step. Throws
// gangway::Error, one line naming the port and what to configure, when not.
unsigned rendezvous_port(unsigned primary_port, std::string_view resv_ports);

// The data listener's port: PRIMARY_PORT+2 when it is reserved for the step,
// else 0 (a free port the kernel chooses, announced in the node's card): never
// a predictable port the step does not own.
unsigned data_listen_port(unsigned primary_port, std::string_view resv_ports);

// A port in `range` from the job and step ids. Steps of one job get distinct
// blocks (the step id walks the blocks), so two steps of a job never collide
// until the range is exhausted; jobs are spread by a hash of the job id.
std::uint16_t hashed_port(std::uint32_t job_id, std::uint32_t step_id, PortRange range);

}  // namespace gangway
