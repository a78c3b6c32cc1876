// The site's node check file (node-check.conf) as every command reads it:
// the default path missing is no site file (the defaults); a file named on
// the command line, or one there that cannot be read, or one that does not
// parse, is a problem each caller answers its own way (the node check does
// not check; the post-mortem's collector keeps its record with the defaults).
#pragma once
#include <string>

#include "../../health/site_conf.hpp"

namespace gangway::sys {

enum class SiteFileProblem { none, unreadable, invalid };

struct SiteFile {
    health::SiteConf conf;  // the file's, else the defaults (health::kDefaultXids)
    SiteFileProblem problem = SiteFileProblem::none;
    std::string why;        // unreadable: the reader's line; invalid: the parser's lines
};

SiteFile read_site_file(const std::string& path, bool named);

}  // namespace gangway::sys
