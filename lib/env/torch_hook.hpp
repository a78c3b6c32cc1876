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

// APPTAINER_BINDPATH (comma-separated `src[:dest[:opts]]` entries) with `dir`
// bound read-only at its own path added last, so that `apptainer exec` in the
// task sees the hook that PYTHONPATH names (Apptainer binds only $HOME, /tmp,
// the current directory and system paths); nullopt when an entry binds `dir`
// from the host already.
std::optional<std::string> apptainer_bindpath_with(std::string_view dir, const std::optional<std::string>& current);

}  // namespace gangway
