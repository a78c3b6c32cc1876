#include "torch_hook.hpp"

#include "../base/text.hpp"

namespace gangway {

std::optional<std::string> pythonpath_with(std::string_view dir, const std::optional<std::string>& current) {
    if (!current || current->empty()) return std::string(dir);
    for (const auto& entry : split_keep_empty(*current, ':'))
        if (entry == dir) return std::nullopt;
    return std::string(dir) + ":" + *current;
}

std::optional<std::string> apptainer_bindpath_with(std::string_view dir, const std::optional<std::string>& current) {
    const std::string mine = std::string(dir) + ":" + std::string(dir) + ":ro";
    if (!current || current->empty()) return mine;
    for (const auto& entry : split_keep_empty(*current, ','))
        if (entry.substr(0, entry.find(':')) == dir) return std::nullopt;
    return *current + "," + mine;
}

}  // namespace gangway
