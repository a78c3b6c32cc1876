// Every message carries the plugin's name; SLURM adds "srun: error:" or
// "slurmstepd: error:" ("slurmstepd-NODE: error:" on 24.11 and later) in front of it.
#pragma once
#include <string>

namespace gangway::plugin {

void log_error(const char* msg) noexcept;  // to the user (and slurmd's log in remote context)
void log_error(const std::string& msg);     // (neither allocates: used for std::bad_alloc too)
void log_info(const std::string& msg);   // slurmd's log / srun -v only

}  // namespace gangway::plugin
