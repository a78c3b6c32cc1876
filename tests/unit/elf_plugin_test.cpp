// `gangway doctor`'s ELF reader on hostile files (issue 15, item 9): a
// section table at the top of the address space, counts and sizes that run
// past the end, symbols that point anywhere. Each is an error, never a read
// outside the bytes (the sanitizer build would say so).
#include "catch_compat.hpp"

#include <elf.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

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

namespace {

// A shared object as SLURM's plugins are, reduced to what plugin_info reads:
// section 1 .dynsym (linked to 2), 2 .dynstr = `strtab`, 3 .data holding
// plugin_version (0x160508) and plugin_type ("spank") at address 0x1000,
// then `extra_dynsym` more section headers that are each .dynsym again.
struct Symbol {
    std::uint32_t name;  // offset into strtab
    std::uint64_t value, size;
};

std::string plugin_file(const std::string& strtab, const std::vector<Symbol>& syms, unsigned extra_dynsym = 0) {
    const std::uint16_t shnum = static_cast<std::uint16_t>(4 + extra_dynsym);
    const std::uint64_t shoff = sizeof(Elf64_Ehdr), symoff = shoff + shnum * sizeof(Elf64_Shdr),
                        dataoff = symoff + syms.size() * sizeof(Elf64_Sym), stroff = dataoff + 16;
    std::string f(stroff, '\0');
    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_shoff = shoff;
    eh.e_shnum = shnum;
    std::memcpy(f.data(), &eh, sizeof eh);
    std::vector<Elf64_Shdr> sh(shnum);
    Elf64_Shdr dynsym{};
    dynsym.sh_type = SHT_DYNSYM;
    dynsym.sh_link = 2;
    dynsym.sh_offset = symoff;
    dynsym.sh_size = syms.size() * sizeof(Elf64_Sym);
    dynsym.sh_entsize = sizeof(Elf64_Sym);
    sh[1] = dynsym;
    for (unsigned i = 0; i < extra_dynsym; ++i) sh[4 + i] = dynsym;
    sh[2].sh_type = SHT_STRTAB;
    sh[2].sh_offset = stroff;
    sh[2].sh_size = strtab.size();
    sh[3].sh_type = SHT_PROGBITS;
    sh[3].sh_addr = 0x1000;
    sh[3].sh_offset = dataoff;
    sh[3].sh_size = 16;
    std::memcpy(f.data() + shoff, sh.data(), sh.size() * sizeof(Elf64_Shdr));
    for (std::size_t k = 0; k < syms.size(); ++k) {
        Elf64_Sym e{};
        e.st_name = syms[k].name;
        e.st_shndx = 3;
        e.st_value = syms[k].value;
        e.st_size = syms[k].size;
        std::memcpy(f.data() + symoff + k * sizeof e, &e, sizeof e);
    }
    const std::uint32_t version = 0x160508;
    std::memcpy(f.data() + dataoff, &version, 4);
    std::memcpy(f.data() + dataoff + 4, "spank", 6);
    return f + strtab;
}

}  // namespace

TEST_CASE("plugin_info: the symbols SLURM reads from a well-formed plugin") {
    const std::string strtab = std::string("\0plugin_version\0plugin_type\0", 28);
    const auto info = plugin_info(plugin_file(strtab, {{1, 0x1000, 4}, {16, 0x1004, 6}}));
    CHECK(info.error.empty());
    CHECK(info.plugin_version == 0x160508u);
    CHECK(info.plugin_type == "spank");
}

TEST_CASE("plugin_info: a string table without NUL costs a bounded read per symbol (issue 23 item 9)") {
    // 1 MiB of .dynstr without a NUL, 32,768 symbols naming places in it:
    // each name was searched for its NUL to the end of the file, 16 GiB of
    // reading in all (seconds; minutes under the sanitizers). A name is now
    // read to at most the longest name sought and its NUL, within the section.
    const std::string strtab(1u << 20, 'p');
    std::vector<Symbol> syms;
    for (std::uint32_t k = 0; k < 32768; ++k) syms.push_back({k * 32, 0x1000, 4});
    const auto info = plugin_info(plugin_file(strtab, syms));
    CHECK_FALSE(info.plugin_version);
    CHECK(info.error == "exports no plugin_version (not a SLURM plugin)");
    CHECK(info.symbol_steps <= 16 * syms.size());

    // A name that runs to the end of its section is no name, even when the
    // file has a NUL after it (it was read past the section).
    const auto cut = plugin_info(plugin_file(std::string("\0plugin_version", 15), {{1, 0x1000, 4}}) + std::string(1, '\0'));
    CHECK_FALSE(cut.plugin_version);

    // One .dynsym is read, however many section headers say .dynsym: 2,000
    // of them over one table of 2,000 symbols were 4 million symbol reads.
    std::vector<Symbol> some(2000, Symbol{1, 0x1000, 4});
    const auto many = plugin_info(plugin_file(std::string("\0plugin_version\0", 16), some, 2000));
    CHECK(many.plugin_version == 0x160508u);
    CHECK(many.symbol_steps <= 16 * some.size());
}
