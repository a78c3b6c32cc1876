#include "elf_plugin.hpp"

#include <elf.h>

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
    // The NUL-terminated string at off, or none when it runs past the end.
    std::optional<std::string_view> c_string(std::uint64_t off) const {
        if (off >= f_.size()) return std::nullopt;
        const auto rest = f_.substr(off);
        const auto nul = rest.find('\0');
        if (nul == std::string_view::npos) return std::nullopt;
        return rest.substr(0, nul);
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

void read_symbols(const Elf& e, const Elf64_Shdr& dynsym, PluginInfo& info) {
    const auto strtab = e.shdr(dynsym.sh_link);
    if (!strtab) return;
    const std::uint64_t count = dynsym.sh_size / sizeof(Elf64_Sym);
    for (std::uint64_t k = 0; k < count; ++k) {
        if (k > (UINT64_MAX - dynsym.sh_offset) / sizeof(Elf64_Sym)) return;
        const auto sym = e.b.read<Elf64_Sym>(dynsym.sh_offset + k * sizeof(Elf64_Sym));
        if (!sym) return;  // the table runs past the end of the file
        if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE) continue;
        if (sym->st_name >= strtab->sh_size || sym->st_name > UINT64_MAX - strtab->sh_offset) continue;
        const auto name = e.b.c_string(strtab->sh_offset + sym->st_name);
        if (!name) continue;
        if (*name == "plugin_version" && sym->st_size == 4) {
            if (const char* p = e.object(sym->st_shndx, sym->st_value, 4)) {
                std::uint32_t v;
                std::memcpy(&v, p, 4);
                info.plugin_version = v;
            }
        } else if ((*name == "plugin_type" || *name == "plugin_name") && sym->st_size > 0 && sym->st_size <= 4096) {
            if (const char* p = e.object(sym->st_shndx, sym->st_value, sym->st_size))
                (*name == "plugin_type" ? info.plugin_type : info.plugin_name) = std::string(p, strnlen(p, sym->st_size));
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
        if (s->sh_type == SHT_DYNSYM && s->sh_entsize == sizeof(Elf64_Sym)) read_symbols(e, *s, info);
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
