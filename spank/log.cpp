#include "log.hpp"

#include "spank_api.hpp"

namespace gangway::plugin {

void log_error(const char* msg) noexcept { slurm_error("gangway: %s", msg); }
void log_error(const std::string& msg) { log_error(msg.c_str()); }
void log_info(const std::string& msg) { slurm_info("gangway: %s", msg.c_str()); }

}  // namespace gangway::plugin
