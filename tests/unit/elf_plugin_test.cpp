// `gangway doctor`'s ELF reader on hostile files (issue 15, item 9): a
// section table at the top of the address space, counts and sizes that run
// past the end, symbols that point anywhere. Each is an error, never a read
// outside the bytes (the sanitizer build would say so).
#include "catch_compat.hpp"

#include <elf.h>

#include <cstring>
#include <random>
#include <string>

#include "../../lib/preflight/elf_plugin.hpp"

using gangway::preflight::plugin_info;

namespace {

// A minimal ELF64 header followed by `sections` section headers, the first a
// DYNSYM whose link is `link`.
std::string elf(std::uint64_t shoff, std::uint16_t shnum, Elf64_Shdr dynsym) {
    std::string f(sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Shdr), '\0');
    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_shoff = shoff;
    eh.e_shnum = shnum;
    std::memcpy(f.data(), &eh, sizeof eh);
    std::memcpy(f.data() + sizeof eh, &dynsym, sizeof dynsym);
    return f;
}

}  // namespace

TEST_CASE("plugin_info: malformed ELF files are errors, never reads outside the file") {
    CHECK(plugin_info("").error == "is not a 64-bit ELF shared object");
    CHECK(plugin_info("\x7f" "ELF").error == "is not a 64-bit ELF shared object");
    Elf64_Shdr s{};
    s.sh_type = SHT_DYNSYM;
    s.sh_entsize = sizeof(Elf64_Sym);
    // The section table's offset wraps round 2^64 (gangway doctor segfaulted).
    CHECK(plugin_info(elf(UINT64_MAX - 63, 1, s)).error.find("no plugin_version") != std::string::npos);
    CHECK(plugin_info(elf(1ull << 63, 0xffff, s)).error.find("no plugin_version") != std::string::npos);
    // The symbol table's offset wraps, its size runs past the end, its string table is missing.
    s.sh_offset = UINT64_MAX - 23;
    s.sh_size = 48;
    CHECK_FALSE(plugin_info(elf(sizeof(Elf64_Ehdr), 1, s)).plugin_version);
    s.sh_offset = 0;
    s.sh_size = UINT64_MAX - 23;
    s.sh_link = 0;  // itself: symbols read from the header bytes
    CHECK_FALSE(plugin_info(elf(sizeof(Elf64_Ehdr), 2, s)).plugin_version);
    s.sh_link = 0xffff;
    CHECK_FALSE(plugin_info(elf(sizeof(Elf64_Ehdr), 2, s)).plugin_version);
    // Random bytes after a valid magic: thousands of shapes, none may crash.
    std::mt19937_64 rng(15);
    for (int n = 0; n < 2000; ++n) {
        std::string f = elf(sizeof(Elf64_Ehdr), 2, s);
        f.resize(f.size() + 256);
        for (std::size_t i = 6; i < f.size(); ++i)
            if (rng() % 4 == 0) f[i] = static_cast<char>(rng());
        f[EI_CLASS] = ELFCLASS64;
        (void)plugin_info(f);
    }
}
