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

std::set<std::uint16_t> reserved_ports(std::string_view resv) {
    std::set<std::uint16_t> out;
    const auto bad = [&] {
        return Error("SLURM_STEP_RESV_PORTS=\"" + std::string(resv) + "\" is not a list of ports; fix MpiParams=ports in slurm.conf");
    };
    for (const auto& item : split_nonempty(resv, ',')) {
        const auto dash = item.find('-');
        const auto lo = parse_uint<std::uint16_t>(std::string_view(item).substr(0, dash));
        const auto hi = dash == std::string::npos ? lo : parse_uint<std::uint16_t>(std::string_view(item).substr(dash + 1));
        if (!lo || !hi || *lo == 0 || *hi < *lo) throw bad();
        for (unsigned p = *lo; p <= *hi; ++p) out.insert(static_cast<std::uint16_t>(p));
    }
    return out;
}

unsigned rendezvous_port(unsigned primary, std::string_view resv) {
    const unsigned port = primary + 1;
    if (resv.empty()) return port;
    if (reserved_ports(resv).count(static_cast<std::uint16_t>(port))) return port;
    throw Error("the rendezvous needs PRIMARY_PORT+1 (" + std::to_string(port) +
                "), which is not among the step's reserved ports (SLURM_STEP_RESV_PORTS=" + std::string(resv) +
                "): reserve at least 2 ports for the step (srun --resv-ports=2, within MpiParams=ports= of slurm.conf)");
}

unsigned data_listen_port(unsigned primary, std::string_view resv) {
    if (resv.empty()) return 0;
    return reserved_ports(resv).count(static_cast<std::uint16_t>(primary + 2)) ? primary + 2 : 0;
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
