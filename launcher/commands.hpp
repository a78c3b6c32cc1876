#pragma once

namespace gangway::cli {

// argv[0] is the subcommand's name. Each returns the process exit code.
int cmd_env(int argc, char** argv);
int cmd_topo(int argc, char** argv);

}  // namespace gangway::cli
