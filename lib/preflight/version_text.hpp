// Software versions as the files of a node spell them: the NVIDIA driver's
// /proc line, CUDA's version.json or version.txt, NCCL's library file name,
// and SLURM's release as its commands print it and its plugins store it.
// Pure parsing, so the node card (lib/sys/devices/node_card) and `gangway
// doctor` read files and run commands and these say what is in them; the
// string ones return "" when the text holds no version.
//
// Cost (SECURITY.md, "What a parser may spend"): each reads its text once or a bounded
// number of times, O(n), and keeps no more than the version it returns.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gangway::preflight {

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..." and the open
// module's "... Open Kernel Module for x86_64  535.104.05  ..." give the number.
std::string driver_version_from_proc(std::string_view line);

// {"cuda" : {"name" : "CUDA SDK", "version" : "12.4.1"}, ...}: the version in
// the "cuda" object (other objects of the file carry versions of their own).
std::string cuda_version_from_json(std::string_view text);

// "CUDA Version 11.8.89" (version.txt of CUDA 11.0 and older toolkits).
std::string cuda_version_from_txt(std::string_view line);

// "libnccl.so.2.21.5" gives "2.21.5"; "libnccl.so.2" or any other name gives "".
std::string nccl_version_from_soname(std::string_view file_name);

// Dotted versions compared number by number, so that 2.9.9 < 2.18.5 (which
// text comparison gets wrong); a missing part counts as 0.
bool version_less(std::string_view a, std::string_view b);

// A SLURM release. SLURM loads only plugins built for its own major.minor
// (the "release"), so that is what `gangway doctor` compares.
struct SlurmVersion {
    int major = 0, minor = 0, micro = 0;
    std::string text() const;     // "22.05.8": the minor with two digits, as SLURM writes it
    std::string release() const;  // "22.05"
    bool same_release(const SlurmVersion& o) const { return major == o.major && minor == o.minor; }
};

// The first N.N.N in a command's output ("slurm 22.05.8", "slurm-wlm
// 23.11.1-1"): three numbers joined by dots, starting where a number starts,
// each read to at most 6 digits (a longer first or second number is no
// version); nullopt when there is none.
std::optional<SlurmVersion> slurm_version_in(std::string_view text);

// SLURM_VERSION_NUMBER's encoding, 0xMMmmuu, as a plugin's plugin_version holds it.
SlurmVersion slurm_version_from_number(std::uint32_t n);

}  // namespace gangway::preflight
