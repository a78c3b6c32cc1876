// A private directory under /tmp for one test case, removed with all it holds
// when the case ends, passed or failed.
#pragma once
#include <stdlib.h>

#include <filesystem>
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

}  // namespace gangway::test
