// What a SLURM plugin file says about itself (plugin_version, plugin_type,
// plugin_name, gangway's ident string), read from its bytes as an ELF file
// for `gangway doctor`. The file may be anything: every offset, size and
// index in it is checked against the bytes before it is followed, and the
// work is linear in the file's size: one symbol table is read, and each
// symbol's name to at most 15 bytes within its string table's section.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gangway::preflight {

struct PluginInfo {
    std::string error;  // non-empty: not readable as a 64-bit ELF plugin
    std::optional<std::uint32_t> plugin_version;
    std::optional<std::string> plugin_type, plugin_name;
    std::optional<std::string> gangway_version;  // from the plugin's @(#) ident string
    // Symbols and string-table bytes looked at: at most 16 per symbol of one
    // symbol table, so linear in the file's size (the unit test checks it).
    std::uint64_t symbol_steps = 0;
};

PluginInfo plugin_info(std::string_view elf);

}  // namespace gangway::preflight
