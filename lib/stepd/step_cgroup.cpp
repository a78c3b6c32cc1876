#include "step_cgroup.hpp"

#include <charconv>

#include "../base/text.hpp"

namespace gangway::postmortem {
namespace {

// "/slurm/uid_0/job_7/step_0/task_1" -> "/slurm/uid_0/job_7/step_0"; empty
// without a step component or with a "." or ".." one (a path starts with
// '/', so a prefix never is).
std::string_view step_prefix(std::string_view path) {
    if (path.empty() || path.front() != '/') return {};
    std::size_t end = std::string_view::npos, pos = 1;
    while (pos <= path.size()) {
        std::size_t slash = path.find('/', pos);
        if (slash == std::string_view::npos) slash = path.size();
        const std::string_view part = path.substr(pos, slash - pos);
        if (part == "." || part == "..") return {};
        if (part.starts_with("step_")) end = slash;
        pos = slash + 1;
    }
    if (end == std::string_view::npos) return {};
    return path.substr(0, end);
}

bool lists_memory(std::string_view controllers) {
    while (!controllers.empty()) {
        const auto comma = controllers.find(',');
        if (controllers.substr(0, comma) == "memory") return true;
        controllers = comma == std::string_view::npos ? std::string_view() : controllers.substr(comma + 1);
    }
    return false;
}

// The first step path of each hierarchy, as views into the text (the file
// names are built once, by the caller: slurmstepd runs this per task).
struct StepPaths {
    std::string_view v1, v2;  // v1: the memory controller's; v2: the unified hierarchy's
};
StepPaths step_paths(std::string_view proc_cgroup) {
    StepPaths p;
    for_each_line(proc_cgroup, [&](std::string_view line, std::size_t) {
        // "ID:CONTROLLERS:PATH"; the path may itself hold ':'.
        const auto c1 = line.find(':');
        if (c1 == std::string_view::npos) return;
        const auto c2 = line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) return;
        const std::string_view id = line.substr(0, c1), controllers = line.substr(c1 + 1, c2 - c1 - 1);
        const std::string_view path = line.substr(c2 + 1);
        if (p.v1.empty() && lists_memory(controllers))
            p.v1 = step_prefix(path);
        else if (p.v2.empty() && id == "0" && controllers.empty())
            p.v2 = step_prefix(path);
    });
    return p;
}

std::string_view number(char (&n)[16], unsigned v) {
    return std::string_view(n, static_cast<std::size_t>(std::to_chars(n, n + sizeof n, v).ptr - n));
}

}  // namespace

std::optional<OomFiles> step_oom_files(std::string_view proc_cgroup, unsigned local_task, std::string_view cgroup_root) {
    const auto [v1, v2] = step_paths(proc_cgroup);
    if (v1.empty() && v2.empty()) return std::nullopt;
    if (v1.empty()) return OomFiles{concat({cgroup_root, v2, "/memory.events"}), {}};
    char n[16];
    const std::string_view task = number(n, local_task);
    return OomFiles{concat({cgroup_root, "/memory", v1, "/memory.oom_control"}),
                    concat({cgroup_root, "/memory", v1, "/task_", task, "/memory.oom_control"})};
}

std::optional<std::string> task_procs_file(std::string_view proc_cgroup, unsigned local_task, std::string_view cgroup_root) {
    const auto [v1, v2] = step_paths(proc_cgroup);
    char n[16];
    const std::string_view task = number(n, local_task);
    if (!v1.empty()) return concat({cgroup_root, "/memory", v1, "/task_", task, "/cgroup.procs"});
    if (!v2.empty()) return concat({cgroup_root, v2, "/user/task_", task, "/cgroup.procs"});
    return std::nullopt;
}

std::optional<std::string> step_v2_dir(std::string_view proc_cgroup, std::string_view cgroup_root) {
    const auto p = step_paths(proc_cgroup);
    if (p.v2.empty()) return std::nullopt;
    return concat({cgroup_root, p.v2});
}

std::uint64_t parse_oom_kill(std::string_view counters) {
    std::uint64_t n = 0;
    for_each_line(counters, [&](std::string_view line, std::size_t) {
        if (!line.starts_with("oom_kill ")) return;
        if (const auto v = parse_uint<std::uint64_t>(trim_right(line.substr(9)))) n = *v;
    });
    return n;
}

}  // namespace gangway::postmortem
