#include "pci_bus_id.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>

#include "text.hpp"

namespace gangway {
namespace {

bool all_hex(std::string_view s) {
    for (const char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
    return true;
}

}  // namespace

std::optional<std::string> pci_bus_id(std::string_view s) {
    const auto c2 = s.rfind(':');
    if (c2 == std::string_view::npos || c2 == 0) return std::nullopt;
    const auto c1 = s.rfind(':', c2 - 1);
    if (c1 == std::string_view::npos) return std::nullopt;
    const std::string_view domain = s.substr(0, c1), bus = s.substr(c1 + 1, c2 - c1 - 1);
    std::string_view device = s.substr(c2 + 1), function = "0";
    if (const auto dot = device.find('.'); dot != std::string_view::npos) {
        function = device.substr(dot + 1);
        device = device.substr(0, dot);
    }
    if (domain.size() < 4 || domain.size() > 8 || bus.size() != 2 || device.size() != 2 || function.size() != 1) return std::nullopt;
    if (!all_hex(domain) || !all_hex(bus) || !all_hex(device) || function[0] < '0' || function[0] > '7') return std::nullopt;
    const auto d = parse_uint<std::uint32_t>(domain, 16);
    const auto b = parse_uint<unsigned>(bus, 16), v = parse_uint<unsigned>(device, 16);
    if (!d || !b || !v || *v > 0x1f) return std::nullopt;
    char out[24];
    std::snprintf(out, sizeof out, "%04x:%02x:%02x.%c", static_cast<unsigned>(*d), *b, *v, function[0]);
    return std::string(out);
}

std::string sysfs_bus_id(std::string_view library_id) {
    if (auto b = pci_bus_id(library_id)) return *b;
    std::string id(library_id);
    for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return id;
}

}  // namespace gangway
