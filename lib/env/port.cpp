#include "port.hpp"

#include <string>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway {

std::optional<std::uint16_t> first_reserved_port(std::string_view resv) {
    if (resv.empty()) return std::nullopt;
    const auto end = resv.find_first_of("-,");
    const auto v = parse_uint<std::uint16_t>(resv.substr(0, end));
    if (!v || *v == 0)
        throw Error("SLURM_STEP_RESV_PORTS=\"" + std::string(resv) +
                    "\" does not start with a port number; unset it or fix MpiParams=ports in slurm.conf");
    return *v;
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
