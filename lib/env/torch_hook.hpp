// The site's PyTorch hook (torch-hook/: a TCPStore fallback for builds without
// libuv, which torch >= 2.5 loads itself from PYTHONPATH) in a task's
// PYTHONPATH. Pure.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace gangway {

// PYTHONPATH with `dir` first, the task's own entries kept after it; nullopt
// when `dir` is one of its entries already (an srun inside a step that had
// it, or a user who put it elsewhere on purpose).
std::optional<std::string> pythonpath_with(std::string_view dir, const std::optional<std::string>& current);

}  // namespace gangway
