// plugstack.conf as gangway doctor reads it, each gangway line's arguments
// as the plugin judges them, and slurm.conf's PlugStackConfig; then the walk
// through includes (lib/conf/plugstack_walk) over files cut from the input, and
// the same files read as slurm.conf and its Include lines (lib/conf/slurm_conf_walk).
#include <fnmatch.h>

#include <map>

#include "lib/env/config.hpp"
#include "lib/conf/plugstack_text.hpp"
#include "lib/conf/plugstack_walk.hpp"
#include "lib/conf/slurm_conf_walk.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

// The input cut at each "\n%%\n" into at most 8 files: /etc/slurm/plugstack.conf,
// then /etc/slurm/d/1.conf to 7.conf, which its includes (and theirs) may
// name by any pattern, themselves and each other included.
class FuzzFiles : public gangway::ConfFiles {
public:
    explicit FuzzFiles(std::string_view in) {
        for (int i = 0; i < 8; ++i) {
            const auto cut = in.find("\n%%\n");
            files_[i == 0 ? "/etc/slurm/plugstack.conf" : "/etc/slurm/d/" + std::to_string(i) + ".conf"] =
                std::string(in.substr(0, cut));
            if (cut == std::string_view::npos) break;
            in.remove_prefix(cut + 4);
        }
    }
    std::vector<std::string> expand(const std::string& pattern) override {
        std::vector<std::string> out;
        for (const auto& [p, _] : files_)
            if (fnmatch(pattern.c_str(), p.c_str(), FNM_PATHNAME) == 0) out.push_back(p);
        return out;
    }
    std::optional<Id> identify(const std::string& path) override {
        const auto it = files_.find(path);
        if (it == files_.end()) return std::nullopt;
        return Id{0, static_cast<std::uint64_t>(std::distance(files_.begin(), it))};
    }
    std::optional<Text> read(const std::string& path, std::size_t limit) override {
        const auto it = files_.find(path);
        if (it == files_.end()) return std::nullopt;
        return Text{it->second.substr(0, limit), it->second.size() > limit};
    }

private:
    std::map<std::string, std::string> files_;  // sorted, as glob(3) sorts
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): plugstack_lines: 32 n, each line's site keys: 48 n, plugstack_config: 8 n; the walk: the files made here (n) and read (4 MiB at most);
    // read_slurm_conf: the files made here (n), the files read (n), the text (n), at most 17 remarks of two paths (140 KiB).
    const gangway::fuzz::HeapBudget budget(size, 128, 5u << 20);
    const auto in = gangway::fuzz::text(data, size);
    gangway::fuzz::refusable([&] {
        for (const auto& line : gangway::plugstack_lines(in, "plugstack.conf"))
            gangway::fuzz::refusable([&] { (void)gangway::parse_site_args(line.args); });
    });
    gangway::fuzz::refusable([&] { (void)gangway::plugstack_config(in); });
    // The walk takes any files: never an exception, and each file read at most once.
    FuzzFiles files(in);
    const auto walk = gangway::walk_plugstack("/etc/slurm/plugstack.conf", files);
    if (walk.read.size() > 8) __builtin_trap();
    // The same files as slurm.conf and what its Include lines name (lib/conf/slurm_conf_walk):
    // never an exception, each file read once, the text no longer than what was read.
    FuzzFiles conf(in);
    const auto sc = gangway::read_slurm_conf("/etc/slurm/plugstack.conf", conf);
    if (sc.read.size() > 8 || sc.text.size() > size + sc.read.size() || sc.remarks.size() > 17) __builtin_trap();
    return 0;
}
