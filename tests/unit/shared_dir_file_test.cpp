// Files in a directory other users can write (the drain spool): the writer
// never follows a planted link, the reader checks the file it opened.
#include "catch_compat.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.hpp"
#include "../../lib/sys/node/file.hpp"

using namespace gangway::sys;
namespace fs = std::filesystem;

using gangway::test::TempDir;

namespace {

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
    REQUIRE(write_file_atomic((d.path / "r.json").string(), "{}\n", 0666));
    CHECK(slurp(d.path / "r.json") == "{}\n");
}

TEST_CASE("write_file_atomic: a directory it cannot write to is one clear line") {
    auto w = write_file_atomic("/nonexistent-dir", "x", "y", 0644);
    REQUIRE_FALSE(w);
    CHECK(w.error().find("cannot write /nonexistent-dir/x") == 0);
}

TEST_CASE("write_file_atomic: a failure leaves nothing behind and says what to do") {
    TempDir d;
    // The final name is a directory that is not empty: the rename fails after
    // the private file was written; it is removed.
    fs::create_directory(d.path / "taken");
    { std::ofstream(d.path / "taken" / "x") << "x"; }
    auto w = write_file_atomic(d.path.string(), "taken", "text", 0644, "the report");
    REQUIRE_FALSE(w);
    CHECK(w.error().find("cannot write the report " + (d.path / "taken").string() + " (") == 0);
    CHECK(w.error().find("give a file name") != std::string::npos);
    CHECK(w.error().find('\n') == std::string::npos);
    CHECK(std::distance(fs::directory_iterator(d.path), fs::directory_iterator{}) == 1);
    // A write that fails half-way (the file-size limit): nothing half-written stays.
    struct rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old;
    small.rlim_cur = 100;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    auto big = write_file_atomic(d.path.string(), "big", std::string(4096, 'x'), 0644);
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    REQUIRE_FALSE(big);
    CHECK(big.error().find("cannot write " + (d.path / "big").string()) == 0);
    CHECK(std::distance(fs::directory_iterator(d.path), fs::directory_iterator{}) == 1);
    // Not a file name.
    CHECK_FALSE(write_file_atomic(d.path.string() + "/", "x", 0644));
    CHECK_FALSE(write_file_atomic(d.path.string(), "a/b", "x", 0644));
}

TEST_CASE("write_file_atomic: the mode is the one given, less the umask; the temporary name is unpredictable") {
    TempDir d;
    const mode_t old = ::umask(022);
    REQUIRE(write_file_atomic(d.path.string(), "a", "1", 0644));
    REQUIRE(write_file_atomic(d.path.string(), "b", "1", 0600));
    ::umask(old);
    CHECK((fs::status(d.path / "a").permissions() & fs::perms::all) == fs::perms(0644));
    CHECK((fs::status(d.path / "b").permissions() & fs::perms::all) == fs::perms(0600));
    // Something planted at every name of the old scheme (NAME.tmp.PID and the
    // private name without its random part) is neither followed nor in the way.
    const auto victim = d.path / "victim";
    { std::ofstream(victim) << "precious\n"; }
    fs::create_symlink(victim, d.path / ("c.tmp." + std::to_string(::getpid())));
    fs::create_symlink(victim, d.path / (".c.tmp." + std::to_string(::getpid())));
    REQUIRE(write_file_atomic(d.path.string(), "c", "new\n", 0644));
    CHECK(slurp(victim) == "precious\n");
    CHECK(slurp(d.path / "c") == "new\n");
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
