// Files in memory for the walks through SLURM's configuration files
// (lib/conf/conf_files.hpp), counting what a walk asks of them. `links` name a
// file by another path (a symbolic link): the same identity.
#pragma once
#include <fnmatch.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "../../lib/conf/conf_files.hpp"

namespace gangway::test {

class MemoryFiles : public ConfFiles {
public:
    std::map<std::string, std::string> files;
    std::map<std::string, std::string> links;  // path -> the file it names
    std::size_t reads = 0, identifies = 0, bytes_read = 0;

    std::vector<std::string> expand(const std::string& pattern) override {
        std::vector<std::string> out;
        for (const auto& [p, _] : files)
            if (fnmatch(pattern.c_str(), p.c_str(), FNM_PATHNAME) == 0) out.push_back(p);
        for (const auto& [p, _] : links)
            if (fnmatch(pattern.c_str(), p.c_str(), FNM_PATHNAME) == 0) out.push_back(p);
        std::sort(out.begin(), out.end());
        return out;
    }
    std::optional<Id> identify(const std::string& path) override {
        ++identifies;
        const std::string& real = links.count(path) ? links.at(path) : path;
        const auto it = files.find(real);
        if (it == files.end()) return std::nullopt;
        return Id{1, static_cast<std::uint64_t>(std::distance(files.begin(), it))};
    }
    std::optional<Text> read(const std::string& path, std::size_t limit) override {
        ++reads;
        const std::string& real = links.count(path) ? links.at(path) : path;
        const auto it = files.find(real);
        if (it == files.end()) return std::nullopt;
        Text t{it->second.substr(0, limit), it->second.size() > limit};
        bytes_read += t.text.size();
        return t;
    }
};

}  // namespace gangway::test
