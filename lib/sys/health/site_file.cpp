#include "site_file.hpp"

#include <unistd.h>

#include "../../base/error.hpp"
#include "../node/file.hpp"

namespace gangway::sys {

SiteFile read_site_file(const std::string& path, bool named) {
    SiteFile f;
    f.conf.xids = health::kDefaultXids;
    if (const auto text = read_config_file(path)) {
        try {
            f.conf = health::parse_site_conf(*text, path);
        } catch (const Error& e) {
            f.problem = SiteFileProblem::invalid;
            f.why = e.what();
        }
    } else if (named || ::access(path.c_str(), F_OK) == 0) {
        f.problem = SiteFileProblem::unreadable;
        f.why = text.error();
    }
    return f;
}

}  // namespace gangway::sys
