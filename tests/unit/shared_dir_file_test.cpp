// Files in a directory other users can write (the drain spool): the writer
// never follows a planted link, the reader checks the file it opened.
#include "catch_compat.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../../lib/sys/node/shared_dir_file.hpp"

using namespace gangway::sys;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        char t[] = "/tmp/gangway-sdf.XXXXXX";
        path = ::mkdtemp(t);
    }
    ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST_CASE("write_file_atomic: a link planted at the name is replaced, never written through") {
    TempDir d;
    const auto victim = d.path / "victim";
    { std::ofstream(victim) << "precious\n"; }
    fs::create_symlink(victim, d.path / "gangway-drain.42.node10");
    auto w = write_file_atomic(d.path.string(), "gangway-drain.42.node10", "reason=slow\n", 0644);
    REQUIRE(w);
    CHECK(slurp(victim) == "precious\n");
    CHECK_FALSE(fs::is_symlink(d.path / "gangway-drain.42.node10"));
    CHECK(slurp(d.path / "gangway-drain.42.node10") == "reason=slow\n");
    // Nothing else is left behind: the private name was renamed.
    CHECK(std::distance(fs::directory_iterator(d.path), fs::directory_iterator{}) == 2);
    // The same for a path, as the report and heatmap are written.
    REQUIRE(write_file_atomic((d.path / "r.json").string(), "{}\n"));
    CHECK(slurp(d.path / "r.json") == "{}\n");
}

TEST_CASE("write_file_atomic: a directory it cannot write to is one clear line") {
    auto w = write_file_atomic("/nonexistent-dir", "x", "y");
    REQUIRE_FALSE(w);
    CHECK(w.error().find("cannot write /nonexistent-dir/x") == 0);
}

TEST_CASE("read_owned_file: only a small regular file of the owner, checked on the open file") {
    TempDir d;
    const auto f = d.path / "req";
    { std::ofstream(f) << "reason=slow\n"; }
    auto r = read_owned_file(f.string(), ::getuid(), 4096);
    REQUIRE(r);
    CHECK(*r == "reason=slow\n");
    auto other = read_owned_file(f.string(), ::getuid() + 1, 4096);
    REQUIRE_FALSE(other);
    CHECK(other.error().find("is owned by uid") != std::string::npos);
    auto big = read_owned_file(f.string(), ::getuid(), 5);
    REQUIRE_FALSE(big);
    CHECK(big.error().find("larger than 5 bytes") != std::string::npos);
    fs::create_symlink(f, d.path / "link");
    auto link = read_owned_file((d.path / "link").string(), ::getuid(), 4096);
    REQUIRE_FALSE(link);
    CHECK(link.error().find("symbolic link") != std::string::npos);
    REQUIRE(::mkfifo((d.path / "fifo").c_str(), 0600) == 0);
    auto fifo = read_owned_file((d.path / "fifo").string(), ::getuid(), 4096);  // returns: O_NONBLOCK
    REQUIRE_FALSE(fifo);
    CHECK(fifo.error().find("not a regular file") != std::string::npos);
}

TEST_CASE("read_owned_file: a secret must be closed to group and others (the site's check key)") {
    TempDir d;
    const auto key = d.path / "check.key";
    { std::ofstream(key) << "0123456789abcdef0123456789abcdef"; }
    ::chmod(key.c_str(), 0644);
    auto r = read_owned_file(key, ::geteuid(), 4096, FileAccess::Private);
    REQUIRE_FALSE(r);
    CHECK(r.error().find("mode 0644") != std::string::npos);
    CHECK(r.error().find("chmod 0400") != std::string::npos);
    CHECK(read_owned_file(key, ::geteuid(), 4096, FileAccess::Any));  // the drain requests' rule
    ::chmod(key.c_str(), 0400);
    r = read_owned_file(key, ::geteuid(), 4096, FileAccess::Private);
    REQUIRE(r);
    CHECK(r->size() == 32);
    // Another owner's file, or a link to the key, is refused whatever its mode.
    CHECK_FALSE(read_owned_file(key, ::geteuid() + 1, 4096, FileAccess::Private));
    fs::create_symlink(key, d.path / "link");
    CHECK_FALSE(read_owned_file(d.path / "link", ::geteuid(), 4096, FileAccess::Private));
}
