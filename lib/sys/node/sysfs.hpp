// Reading sysfs-like trees (/sys/class/net, /sys/class/infiniband) under a
// root directory, so tests read fixture copies of them. The PCI GPUs are
// pci_devices.hpp's, the RDMA ports ib_ports.hpp's.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gangway::sys {

// The tree gangway reads sysfs from: GANGWAY_SYSFS_ROOT when set (a copy
// from a real node, the test fixtures), else "/".
std::string sysfs_root();

// The prefix to put before "/sys/...": "" for the live system ("/").
std::string sysfs_base(const std::string& root);

// The file's first line without trailing blanks; "" when it cannot be read
// (or is longer than kMaxAttr: first_line reads attributes, see read_attr).
std::string first_line(const std::filesystem::path& p);

// A short attribute file (up to kMaxAttr bytes) without its trailing newline,
// by plain POSIX calls: this runs in every slurmstepd, where an ifstream's
// first use (libstdc++'s locale set-up) costs about a millisecond, the read
// itself microseconds. nullopt when it cannot be read or is longer.
inline constexpr std::size_t kMaxAttr = 1u << 20;
std::optional<std::string> read_attr(const std::string& path);

// A directory's entries in natural order of their names (ports/2 < ports/10,
// mlx5_2 < mlx5_10); empty when it cannot be read.
std::vector<std::filesystem::path> entries(const std::filesystem::path& dir);

}  // namespace gangway::sys
