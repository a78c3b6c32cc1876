#include "elf_plugin.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace gangway::preflight {

namespace {

// The file's bytes [off, off+len), or none: written so that no sum can wrap.
class Bytes {
public:
    explicit Bytes(std::string_view f) : f_(f) {}
    const char* at(std::uint64_t off, std::uint64_t len) const {
        if (off > f_.size() || len > f_.size() - off) return nullptr;
        return f_.data() + off;
    }
    template <class T>
    std::optional<T> read(std::uint64_t off) const {
        const char* p = at(off, sizeof(T));
        if (!p) return std::nullopt;
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    // Bytes [off, off+len) clipped to the file: empty when off is past its end.
    std::string_view clipped(std::uint64_t off, std::uint64_t len) const {
        if (off >= f_.size()) return {};
        return f_.substr(off, std::min<std::uint64_t>(len, f_.size() - off));
    }
    std::string_view all() const { return f_; }

private:
    std::string_view f_;
};

struct Elf {
    Bytes b;
    Elf64_Ehdr eh;

    std::optional<Elf64_Shdr> shdr(std::uint64_t i) const {
        if (i >= eh.e_shnum || i > (UINT64_MAX - eh.e_shoff) / sizeof(Elf64_Shdr)) return std::nullopt;
        return b.read<Elf64_Shdr>(eh.e_shoff + i * sizeof(Elf64_Shdr));
    }
    // File bytes of an object at virtual address `addr`, through its section.
    const char* object(std::uint16_t shndx, std::uint64_t addr, std::uint64_t len) const {
        const auto s = shdr(shndx);
        if (!s || s->sh_type == SHT_NOBITS || addr < s->sh_addr) return nullptr;
        const std::uint64_t within = addr - s->sh_addr;
        if (within > s->sh_size || len > s->sh_size - within) return nullptr;  // inside its section
        if (within > UINT64_MAX - s->sh_offset) return nullptr;
        return b.at(s->sh_offset + within, len);
    }
};

// The longest name read_symbols looks for: a longer one is none of them.
constexpr std::size_t kLongestName = sizeof("plugin_version") - 1;

void read_symbols(const Elf& e, const Elf64_Shdr& dynsym, PluginInfo& info) {
    const auto strtab = e.shdr(dynsym.sh_link);
    if (!strtab || strtab->sh_type == SHT_NOBITS) return;
    // The string table, computed once: its section, clipped to the file. A
    // name is read within it and to at most kLongestName + 1 bytes, so each
    // symbol costs O(1) whatever the table holds. Searching each name's NUL
    // to the end of the file made a table without NUL quadratic: 1 MiB of it
    // and 32,768 symbols were 16 GiB of reading (issue 23, item 9).
    const std::string_view names = e.b.clipped(strtab->sh_offset, strtab->sh_size);
    const std::uint64_t count = dynsym.sh_size / sizeof(Elf64_Sym);
    for (std::uint64_t k = 0; k < count; ++k) {
        if (k > (UINT64_MAX - dynsym.sh_offset) / sizeof(Elf64_Sym)) return;
        const auto sym = e.b.read<Elf64_Sym>(dynsym.sh_offset + k * sizeof(Elf64_Sym));
        if (!sym) return;  // the table runs past the end of the file
        ++info.symbol_steps;
        if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE) continue;
        if (sym->st_name >= names.size()) continue;
        const std::size_t room = std::min<std::size_t>(kLongestName + 1, names.size() - sym->st_name);
        const std::size_t len = strnlen(names.data() + sym->st_name, room);
        info.symbol_steps += std::min(len + 1, room);
        if (len == room) continue;  // longer than any name sought, or no NUL before the section ends
        const std::string_view name(names.data() + sym->st_name, len);
        if (name == "plugin_version" && sym->st_size == 4 && !info.plugin_version) {
            if (const char* p = e.object(sym->st_shndx, sym->st_value, 4)) {
                std::uint32_t v;
                std::memcpy(&v, p, 4);
                info.plugin_version = v;
            }
        } else if ((name == "plugin_type" || name == "plugin_name") && sym->st_size > 0 && sym->st_size <= 4096) {
            // The first definition of each: a copy of up to 4 KiB per symbol would be another product.
            auto& field = name == "plugin_type" ? info.plugin_type : info.plugin_name;
            if (field) continue;
            if (const char* p = e.object(sym->st_shndx, sym->st_value, sym->st_size))
                field = std::string(p, strnlen(p, sym->st_size));
        }
    }
}

}  // namespace

PluginInfo plugin_info(std::string_view f) {
    PluginInfo info;
    const Bytes b(f);
    const auto eh = b.read<Elf64_Ehdr>(0);
    if (!eh || std::memcmp(f.data(), ELFMAG, SELFMAG) != 0 || f[EI_CLASS] != ELFCLASS64) {
        info.error = "is not a 64-bit ELF shared object";
        return info;
    }
    const Elf e{b, *eh};
    for (std::uint64_t i = 0; i < eh->e_shnum; ++i) {
        const auto s = e.shdr(i);
        if (!s) break;  // the section table runs past the end of the file
        // The gABI allows one SHT_DYNSYM per object: reading every section
        // that claims to be one made the work sections x symbols.
        if (s->sh_type == SHT_DYNSYM && s->sh_entsize == sizeof(Elf64_Sym)) {
            read_symbols(e, *s, info);
            break;
        }
    }
    // spank/plugin.cpp's ident string: "@(#)gangway VERSION (built for SLURM X)".
    constexpr std::string_view ident = "@(#)gangway ";
    if (const auto pos = f.find(ident); pos != std::string_view::npos) {
        const auto end = f.find(' ', pos + ident.size());
        if (end != std::string_view::npos && end - pos < 64)
            info.gangway_version = std::string(f.substr(pos + ident.size(), end - pos - ident.size()));
    }
    if (!info.plugin_version) info.error = "exports no plugin_version (not a SLURM plugin)";
    return info;
}

}  // namespace gangway::preflight
