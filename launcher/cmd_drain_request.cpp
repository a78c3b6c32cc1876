// `gangway drain-request --uid=UID FILE`: for the Epilog helper
// (contrib/epilog/gangway-drain.sh), which runs as root on a file in a
// directory every user can write. A shell cannot open without following a
// link, nor look at the file it opened; this prints the file only when the
// open file itself is regular, owned by UID and small.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../lib/sys/node/file.hpp"
#include "commands.hpp"

namespace gangway::cli {

namespace {

const char* kHelp =
    "usage: gangway drain-request --uid=UID FILE\n"
    "\n"
    "Prints a drain request FILE for the Epilog helper (contrib/epilog/gangway-drain.sh) when it\n"
    "is a regular file owned by UID and at most 4096 bytes; else one line on stderr saying why,\n"
    "and exit 1. Never follows a symbolic link, never blocks on a FIFO.\n";

}  // namespace

int cmd_drain_request(int argc, char** argv) {
    std::string uid_text, file;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kHelp, stdout);
            return 0;
        }
        if (a.rfind("--uid=", 0) == 0) uid_text = a.substr(6);
        else if (file.empty() && a != "--") file = a;
        else if (a != "--") {
            std::fprintf(stderr, "gangway drain-request: one FILE only; see `gangway drain-request --help`\n");
            return 2;
        }
    }
    char* end = nullptr;
    const unsigned long uid = uid_text.empty() ? 0 : std::strtoul(uid_text.c_str(), &end, 10);
    if (uid_text.empty() || *end || uid_text[0] == '-' || uid > 0xfffffffeUL || file.empty()) {
        std::fprintf(stderr, "gangway drain-request: needs --uid=UID (a number) and a FILE; see `gangway drain-request --help`\n");
        return 2;
    }
    const auto text = sys::read_owned_file(file, static_cast<uid_t>(uid), kDrainRequestMaxBytes);
    if (!text) {
        std::fprintf(stderr, "gangway drain-request: %s\n", text.error().c_str());
        return 1;
    }
    std::fwrite(text->data(), 1, text->size(), stdout);
    return 0;
}

}  // namespace gangway::cli
