// The one file access (lib/sys/node/file.hpp): every whole-file read is
// bounded, checks the file it opened, and never waits on a FIFO unless the
// caller says a pipe may be meant.
#include "catch_compat.hpp"

#include <fcntl.h>
#include <climits>
#include <cstring>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "temp_dir.hpp"
#include "../../lib/sys/node/file.hpp"
#include "../../lib/sys/node/sysfs.hpp"

using namespace gangway::sys;
using gangway::test::TempDir;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Runs `read` in a child and gives back its exit status, or -1 when it had
// not returned after 10 s (it blocked: the child is killed, so a regression
// fails this test instead of hanging the suite). The limit only bounds a
// hang; nothing here asserts a time.
int in_child(const std::function<int()>& read) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(read());
    for (int i = 0; i < 1000; ++i) {
        int st = 0;
        if (::waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
        ::usleep(10000);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return -1;
}

}  // namespace

TEST_CASE("read_file: a FIFO in a configuration file's place is one line at once, never waited on") {
    TempDir d;
    const auto fifo = (d.path / "node-check.conf").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // node-check.conf and gres.conf are read with read_config_file; the old
    // sysfs attribute reader opened them blocking and hung on a FIFO.
    CHECK(in_child([&] {
              const auto r = read_config_file(fifo);
              return !r && r.error() == fifo + " is not a regular file" ? 0 : 1;
          }) == 0);
    CHECK(in_child([&] {
              const auto r = read_file(fifo, ReadOptions{100});
              return !r && r.error().find('\n') == std::string::npos ? 0 : 1;
          }) == 0);
    // Where any file is allowed (a plugin path), still not waited on: empty, at once.
    CHECK(in_child([&] {
              ReadOptions o{100};
              o.regular_only = false;
              const auto r = read_file(fifo, o);
              return r && r->empty() ? 0 : 1;
          }) == 0);
}

TEST_CASE("read_file: the size cap, refused or cut, and the file read whole below it") {
    TempDir d;
    const auto p = (d.path / "f").string();
    write(p, std::string(10000, 'x'));
    auto whole = read_file(p, ReadOptions{10000});
    REQUIRE(whole);
    CHECK(whole->size() == 10000);
    const auto over = read_file(p, ReadOptions{9999});
    REQUIRE(!over);
    CHECK(over.error() == p + " is larger than 9999 bytes");
    ReadOptions cut{100};
    cut.over = ReadOptions::Over::Truncate;
    const auto t = read_file_at(AT_FDCWD, p, cut);
    REQUIRE(t.ok());
    CHECK(t.text == std::string(100, 'x'));
    CHECK(t.truncated);
    // A file whose size the kernel does not give (sysfs, /proc) is read to its end.
    ReadOptions any{1u << 20};
    any.regular_only = false;
    any.may_block = true;
    const auto proc = read_file_at(AT_FDCWD, "/proc/self/status", any);
    REQUIRE(proc.ok());
    CHECK(proc.text.find("Pid:") != std::string::npos);
    // A device past the cap: refused, after reading no more than one byte past it.
    const auto zero = read_file_at(AT_FDCWD, "/dev/zero", any);
    CHECK(zero.problem == ReadProblem::too_large);
}

TEST_CASE("read_file: links followed or refused, owner and mode checked on the open file") {
    TempDir d;
    const auto p = (d.path / "key").string();
    write(p, "secret");
    ::chmod(p.c_str(), 0644);
    fs::create_symlink(p, d.path / "link");
    const auto link = (d.path / "link").string();
    CHECK(read_file(link, ReadOptions{100}));  // sites link their configuration files
    ReadOptions nofollow{100};
    nofollow.follow_links = false;
    const auto l = read_file(link, nofollow);
    REQUIRE(!l);
    CHECK(l.error() == link + " is a symbolic link");

    ReadOptions mine{100};
    mine.owner = ::geteuid() + 1;
    const auto o = read_file(p, mine);
    REQUIRE(!o);
    CHECK(o.error().find("is owned by uid " + std::to_string(::geteuid())) != std::string::npos);

    ReadOptions priv{100};
    priv.closed_to_others = true;
    const auto m = read_file(p, priv);
    REQUIRE(!m);
    CHECK(m.error() == p + " has mode 0644: others may read it (chmod 0400 it)");
    ::chmod(p.c_str(), 0600);
    CHECK(read_file(p, priv));

    ReadOptions writer{100};
    writer.written_by_owner_only = true;
    CHECK(read_file(p, writer));
    fs::create_hard_link(p, d.path / "second");
    CHECK(read_file_at(AT_FDCWD, p, writer).problem == ReadProblem::hard_links);
    fs::remove(d.path / "second");
    ::chmod(p.c_str(), 0620);
    CHECK(read_file_at(AT_FDCWD, p, writer).problem == ReadProblem::written_by_others);

    const auto gone = read_file_at(AT_FDCWD, (d.path / "none").string(), ReadOptions{100});
    CHECK(gone.problem == ReadProblem::open);
    CHECK(gone.err == ENOENT);
    const auto dir = read_file(d.path.string(), ReadOptions{100});
    REQUIRE(!dir);
    CHECK(dir.error() == d.path.string() + " is not a regular file");
}

TEST_CASE("read_attr: the kernel's attribute without its newline, through the same reader") {
    TempDir d;
    write(d.path / "speed", "100000\n");
    CHECK(read_attr((d.path / "speed").string()) == "100000");
    write(d.path / "big", std::string(kMaxAttr + 1, 'x'));
    CHECK(!read_attr((d.path / "big").string()));
}

TEST_CASE("random_bytes: as many as asked, not twice the same") {
    const auto a = random_bytes(16), b = random_bytes(16);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->size() == 16);
    CHECK(*a != *b);
}

TEST_CASE("write_file_atomic: without the fsync (Durability::page_cache), still whole, replaced, never through a link") {
    TempDir d;
    const std::string dir = d.path.string();
    REQUIRE(write_file_atomic(dir, "task.0.5", "one\n", 0600, "the task's end", Durability::page_cache));
    CHECK(gangway::test::file_text(d.path / "task.0.5") == "one\n");
    // A link planted at the name is replaced, not written through.
    REQUIRE(::symlink((d.path / "elsewhere").c_str(), (d.path / "task.0.6").c_str()) == 0);
    REQUIRE(write_file_atomic(dir, "task.0.6", "two\n", 0600, "the task's end", Durability::page_cache));
    struct stat st{};
    REQUIRE(::lstat((d.path / "task.0.6").c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);
    CHECK_FALSE(std::filesystem::exists(d.path / "elsewhere"));
    // No private name is left behind.
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(d.path)) n += e.path().filename().string().front() == '.';
    CHECK(n == 0);
}

TEST_CASE("write_file_atomic: a name too long for its private name is the kernel's ENAMETOOLONG line, nothing left") {
    // The private name (".NAME.tmp.PID.<16 hex digits>") is built in a fixed
    // buffer (issue 32 item 6): a name at or past NAME_MAX is refused as
    // openat refuses it, and a long name that leaves room is written.
    TempDir d;
    const std::string dir = d.path.string();
    for (const std::size_t len : {std::size_t(NAME_MAX), std::size_t(NAME_MAX + 1), std::size_t(4096)}) {
        const std::string name(len, 'a');
        const auto w = write_file_atomic(dir, name, "x\n", 0600, "the task's end", Durability::page_cache);
        REQUIRE(!w);
        CHECK(w.error() == "cannot write the task's end " + dir + "/" + name + " (" + std::strerror(ENAMETOOLONG) +
                               "); check the directory's permissions and the disk, and write it again");
    }
    const std::string fits(200, 'b');
    REQUIRE(write_file_atomic(dir, fits, "y\n", 0600, "the task's end", Durability::page_cache));
    CHECK(gangway::test::file_text(d.path / fits) == "y\n");
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(d.path)) n += 1 + (e.path().filename().string().front() == '.');
    CHECK(n == 1);  // the one file, no private name
}
