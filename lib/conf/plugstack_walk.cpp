#include "plugstack_walk.hpp"

#include "../base/text.hpp"  // size_text

#include <algorithm>
#include <map>
#include <utility>

namespace gangway {
namespace {

// The first case of a kind of finding, and how many there were.
struct Finding {
    std::string first;
    std::size_t count = 0;
    // `describe` runs for the first case only: a cycle's text names every file of the loop.
    template <class F>
    void add(F&& describe) {
        if (count++ == 0) first = describe();
    }
    std::string text() const {
        return count > 1 ? first + " (and " + std::to_string(count - 1) + " more such include" + (count > 2 ? "s" : "") + ")"
                         : first;
    }
};

class Walker {
public:
    Walker(ConfFiles& files, const PlugstackBudget& budget) : fs_(files), budget_(budget), left_(budget) {}

    PlugstackWalk run(const std::string& conf) {
        visit(conf, "");
        using L = Remark::Level;
        if (cycle_.count) out_.remarks.push_back({L::problem, cycle_.text()});
        // In files that include each other, most includes name a file read
        // before: the cycle is what to fix, and the note would only repeat it.
        if (again_.count && !cycle_.count) out_.remarks.push_back({L::note, again_.text()});
        if (!stopped_.empty()) {
            out_.remarks.push_back({L::problem, stopped_});
            out_.complete = false;
        }
        return std::move(out_);
    }

private:
    struct Open {
        ConfFiles::Id id;
        std::string path;
    };

    void stop(const std::string& at, const std::string& limit) {
        stopped_ = "plugstack.conf and its includes go past " + limit + " (at " + at +
                   "): the doctor stopped reading there and did not check the rest, which SLURM reads at every job "
                   "step; keep plugstack.conf to a few small files";
    }

    // `path`: the file; `from`: "FILE:LINE" of the include that names it, "" for conf itself.
    void visit(const std::string& path, const std::string& from) {
        if (!stopped_.empty()) return;
        const auto id = fs_.identify(path);
        if (!id) return;  // SLURM skips a missing file too (an empty glob, a removed one)
        // Known by device and inode before a byte is read: a cycle costs one stat, not one read.
        const auto open = std::find_if(chain_.begin(), chain_.end(), [&](const Open& o) { return o.id == *id; });
        if (open != chain_.end()) {
            cycle_.add([&] {
                std::string loop;
                for (auto o = open; o != chain_.end(); ++o) loop += o->path + " -> ";
                return from + " includes " + path + ", which is being read: a cycle (" + loop + path +
                       "); SLURM does not guard against it and reads the files over and over until srun and "
                       "slurmstepd run out of open files and fail; remove the include";
            });
            return;
        }
        if (const auto seen = first_.find(*id); seen != first_.end()) {
            again_.add([&] {
                return from + " includes " + path + " again (first read " +
                       (seen->second.empty() ? std::string("as plugstack.conf itself") : "through " + seen->second) +
                       "): SLURM reads it twice and refuses its plugins the second time; include it once";
            });
            return;
        }
        if (left_.files == 0) return stop(path, std::to_string(budget_.files) + " files");
        const auto text = fs_.read(path, left_.bytes);
        if (!text) return;
        if (text->truncated) return stop(path, size_text(budget_.bytes));
        --left_.files;
        left_.bytes -= std::min(left_.bytes, text->text.size());
        first_.emplace(*id, from);
        out_.read.push_back(path);
        chain_.push_back({*id, path});
        for (auto& l : plugstack_lines(text->text, path)) {
            if (!stopped_.empty()) break;
            if (!l.include) {
                out_.lines.push_back(std::move(l));
                continue;
            }
            const std::string where = l.file + ":" + std::to_string(l.line);
            if (!take_path(where)) break;
            for (const auto& p : fs_.expand(l.path)) {
                if (!take_path(where)) break;
                visit(p, where);
                if (!stopped_.empty()) break;
            }
        }
        chain_.pop_back();
    }

    // One step of the paths budget; false (and the walk stopped) when none is left.
    bool take_path(const std::string& at) {
        if (left_.paths == 0) {
            if (stopped_.empty()) stop(at, std::to_string(budget_.paths) + " include paths");
            return false;
        }
        --left_.paths;
        return true;
    }

    ConfFiles& fs_;
    const PlugstackBudget budget_;
    PlugstackBudget left_;  // what is left of it
    PlugstackWalk out_;
    std::vector<Open> chain_;                          // the files being read, outermost first
    std::map<ConfFiles::Id, std::string> first_;  // every file read: the include that named it first
    Finding cycle_, again_;
    std::string stopped_;
};

}  // namespace

PlugstackWalk walk_plugstack(const std::string& conf, ConfFiles& files, const PlugstackBudget& budget) {
    return Walker(files, budget).run(conf);
}

}  // namespace gangway
