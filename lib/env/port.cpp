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
        throw Error("SLURM_STEP_RESV_PORTS=\"" + excerpt(resv) +
                    "\" does not start with a port number; unset it or fix MpiParams=ports in slurm.conf");
    return *v;
}

bool is_reserved_port(std::string_view resv, unsigned port) {
    bool found = false;
    for (std::size_t pos = 0; pos < resv.size();) {
        const auto comma = resv.find(',', pos);
        const std::string_view item = resv.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
        pos = comma == std::string_view::npos ? resv.size() : comma + 1;
        if (item.empty()) continue;  // "12000,,12002": SLURM's lists have none, and they name nothing
        const auto dash = item.find('-');
        const auto lo = parse_uint<std::uint16_t>(item.substr(0, dash));
        const auto hi = dash == std::string_view::npos ? lo : parse_uint<std::uint16_t>(item.substr(dash + 1));
        if (!lo || !hi || *lo == 0 || *hi < *lo)
            throw Error("SLURM_STEP_RESV_PORTS=\"" + excerpt(resv) + "\" is not a list of ports (\"" + excerpt(item) +
                        "\"); fix MpiParams=ports in slurm.conf");
        found = found || (*lo <= port && port <= *hi);
    }
    return found;
}

unsigned rendezvous_port(unsigned primary, std::string_view resv) {
    const unsigned port = primary + 1;
    if (resv.empty()) return port;
    if (is_reserved_port(resv, port)) return port;
    throw Error("the rendezvous needs PRIMARY_PORT+1 (" + std::to_string(port) +
                "), which is not among the step's reserved ports (SLURM_STEP_RESV_PORTS=" + excerpt(resv) +
                "): reserve at least 2 ports for the step (srun --resv-ports=2, within MpiParams=ports= of slurm.conf)");
}

unsigned data_listen_port(unsigned primary, std::string_view resv) {
    if (resv.empty()) return 0;
    return is_reserved_port(resv, primary + 2) ? primary + 2 : 0;
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
