// `gangway postmortem`: who stopped a job (issue 33). The subcommands'
// dispatch; each lives in its own file (cmd_postmortem_deliver.cpp: the
// job's line and timeline, and `send`).
#include <string>

#include "commands.hpp"

namespace gangway::cli {

int cmd_postmortem(int argc, char** argv) {
    const std::string sub = argc > 1 ? argv[1] : "";
    if (sub == "send") return cmd_postmortem_send(argc - 1, argv + 1);
    return cmd_postmortem_job(argc, argv);
}

}  // namespace gangway::cli
