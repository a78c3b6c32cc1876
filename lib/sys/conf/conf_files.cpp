#include "conf_files.hpp"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>

#include "../node/file.hpp"

namespace gangway::sys {

std::vector<std::string> DiskFiles::expand(const std::string& pattern) {
    std::vector<std::string> out;
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0) out.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);
    globfree(&g);
    return out;
}

std::optional<ConfFiles::Id> DiskFiles::identify(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return Id{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

std::optional<ConfFiles::Text> DiskFiles::read(const std::string& path, std::size_t limit) {
    ReadOptions o{limit};
    o.over = ReadOptions::Over::Truncate;
    auto r = read_file_at(AT_FDCWD, path, o);
    if (!r.ok()) return std::nullopt;
    return Text{std::move(r.text), r.truncated};
}

}  // namespace gangway::sys
