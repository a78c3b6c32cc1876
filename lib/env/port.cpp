#include "port.hpp"

#include <charconv>
#include <string>

#include "../base/error.hpp"

namespace gangway {

std::optional<std::uint16_t> first_reserved_port(std::string_view resv) {
    if (resv.empty()) return std::nullopt;
    const auto end = resv.find_first_of("-,");
    const std::string_view first = resv.substr(0, end);
    unsigned v = 0;
    auto [p, ec] = std::from_chars(first.data(), first.data() + first.size(), v);
    if (first.empty() || ec != std::errc() || p != first.data() + first.size() || v == 0 || v > 65535)
        throw Error("SLURM_STEP_RESV_PORTS=\"" + std::string(resv) +
                    "\" does not start with a port number; unset it or fix MpiParams=ports in slurm.conf");
    return static_cast<std::uint16_t>(v);
}

std::uint16_t hashed_port(std::uint32_t job_id, std::uint32_t step_id, PortRange range) {
    // splitmix32-style finaliser: neighbouring job ids land far apart.
    std::uint32_t h = job_id + 0x9e3779b9u;
    h = (h ^ (h >> 16)) * 0x85ebca6bu;
    h = (h ^ (h >> 13)) * 0xc2b2ae35u;
    h ^= h >> 16;
    const unsigned span = static_cast<unsigned>(range.hi) - range.lo + 1;
    const unsigned blocks = span / kPortBlock;
    if (blocks == 0) return range.lo;
    const unsigned block = static_cast<unsigned>((std::uint64_t{h} + step_id) % blocks);
    return static_cast<std::uint16_t>(range.lo + block * kPortBlock);
}

}  // namespace gangway
