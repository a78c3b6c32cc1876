// A private directory under /tmp for one test case, removed with all it holds
// when the case ends, passed or failed.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace gangway::test {

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        char t[] = "/tmp/gangway-test.XXXXXX";
        if (!::mkdtemp(t)) throw std::runtime_error("mkdtemp under /tmp failed");
        path = t;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    // The fleet's database in it.
    std::string db() const { return (path / "fleet.db").string(); }
};

// A file's whole text, "" when it cannot be read: what a test's helper left.
inline std::string file_text(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace gangway::test
