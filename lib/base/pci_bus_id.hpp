// PCI bus ids as text: the one parser of the bus ids the NVIDIA driver,
// NVML, CUDA and sysfs write, and their sysfs spelling. Pure; the kernel
// log's Xids (lib/health/xid), the node check's PCI links and the GPU stages
// read bus ids through it.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace gangway {

// A bus id as the driver or sysfs writes it, hex digits only:
// DOMAIN:BUS:DEVICE[.FUNCTION], a domain of 4 to 8 digits, bus and device of
// 2 (device at most 1f), function 0-7 -> sysfs's spelling, "0000:17:00.0"
// (lower case, a 4-digit domain where it fits, function 0 when not given);
// nullopt for anything else.
std::optional<std::string> pci_bus_id(std::string_view s);

// A bus id as a GPU library reports it (cuDeviceGetPCIBusId, NVML: an
// 8-digit domain, upper case) in sysfs's spelling, so that it names the
// device's directory: pci_bus_id's, else the text as it is, in lower case.
std::string sysfs_bus_id(std::string_view library_id);

}  // namespace gangway
