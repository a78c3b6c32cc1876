#include "slurm_conf_walk.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>

#include "../base/text.hpp"
#include "plugstack_text.hpp"  // dirname_of, slurm_conf_include, slurm_conf_value

namespace gangway {
namespace {

class Walker {
public:
    Walker(ConfFiles& fs, const SlurmConfBudget& b, std::string dir)
        : fs_(fs), budget_(b), left_files_(b.files), left_bytes_(b.bytes), left_includes_(b.includes), dir_(std::move(dir)) {}

    // `from`: "FILE:LINE" of the Include naming it, "" for slurm.conf itself.
    void visit(const std::string& path, const std::string& from) {
        const auto id = fs_.identify(path);
        if (!id) {
            if (!from.empty()) remark(from + ": Include " + path + ": no such file, or it cannot be read");
            return;
        }
        if (std::find(chain_.begin(), chain_.end(), *id) != chain_.end()) {
            remark(from + ": Include " + path + ": that file is being read (a cycle): not followed");
            return;
        }
        if (seen_.count(*id)) {
            remark(from + ": Include " + path + ": read already: not read again");
            return;
        }
        if (left_files_ == 0) {
            remark(from + ": Include " + path + ": past " + std::to_string(budget_.files) + " files: not read");
            return;
        }
        const auto text = fs_.read(path, left_bytes_);
        if (!text) {
            if (!from.empty()) remark(from + ": Include " + path + ": cannot be read");
            return;
        }
        if (text->truncated)
            remark(path + ": past " + size_text(budget_.bytes) + " with what it includes: the rest not read");
        --left_files_;
        left_bytes_ -= std::min(left_bytes_, text->text.size());
        seen_.insert(*id);
        out_.read.push_back(path);
        chain_.push_back(*id);
        // %c is slurm.conf's own ClusterName, known before its first Include is followed.
        if (from.empty()) cluster_ = slurm_conf_value(text->text, "ClusterName");
        for_each_line(text->text, [&](std::string_view line, std::size_t no) {
            const std::string inc = slurm_conf_include(line);
            if (inc.empty()) {
                out_.text.append(line);
                out_.text.push_back('\n');
            } else if (left_includes_ == 0) {
                ++unsaid_;  // past the budget: one stat per Include line at most
            } else {
                --left_includes_;
                const std::string where = path + ":" + std::to_string(no);
                if (auto p = resolve(inc)) visit(*p, where);
                else remark(where + ": Include " + excerpt(inc) + ": the name is longer than a path may be (4096 bytes)");
            }
        });
        chain_.pop_back();
    }

    // The remarks past kMaxRemarks, counted in one last line.
    SlurmConf finish() {
        if (unsaid_) out_.remarks.push_back("and " + std::to_string(unsaid_) + " more Include lines not followed, or with a remark like those above");
        return std::move(out_);
    }

private:
    static constexpr std::size_t kMaxRemarks = 16;
    void remark(std::string line) {
        if (out_.remarks.size() < kMaxRemarks) out_.remarks.push_back(std::move(line));
        else ++unsaid_;
    }

    // The path an Include names: %c replaced, a relative name next to
    // slurm.conf. nullopt past PATH_MAX: each %c may add a long ClusterName,
    // and the names would otherwise grow as the square of the text.
    std::optional<std::string> resolve(const std::string& name) const {
        constexpr std::size_t kPathMax = 4096;
        std::string p = name.front() == '/' ? "" : dir_ + "/";
        for (std::size_t i = 0; i < name.size() && p.size() <= kPathMax; ++i) {
            if (name[i] == '%' && i + 1 < name.size() && name[i + 1] == 'c') {
                p += cluster_.substr(0, kPathMax + 1);
                ++i;
            } else {
                p += name[i];
            }
        }
        if (p.size() > kPathMax) return std::nullopt;
        return p;
    }

    ConfFiles& fs_;
    SlurmConfBudget budget_;
    SlurmConf out_;
    std::size_t left_files_, left_bytes_, left_includes_, unsaid_ = 0;
    std::string dir_, cluster_;
    std::vector<ConfFiles::Id> chain_;  // the files being read, outermost first
    std::set<ConfFiles::Id> seen_;
};

}  // namespace

SlurmConf read_slurm_conf(const std::string& path, ConfFiles& files, const SlurmConfBudget& budget) {
    Walker w(files, budget, dirname_of(path));
    w.visit(path, "");
    return w.finish();
}

}  // namespace gangway
