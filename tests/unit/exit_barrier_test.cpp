// The PMIx exit barrier (lib/sys/preflight/pmix_bootstrap.hpp) listens on an
// abstract UNIX socket, which has no permissions: another user on the node can
// take its name first, or connect to it as a member would (issue 23 item 8).
// Neither may release the tasks early nor hold them past the timeout, and the
// real members must still complete. The stranger is a forked child that
// becomes uid/gid 12345 (so the cases that need it run only as root).
#include "catch_compat.hpp"

#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../../lib/sys/preflight/pmix_bootstrap.hpp"

using gangway::sys::NodeExitBarrier;

namespace {

constexpr uid_t kStranger = 12345;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string test_name(const char* tag) { return "gangway-test." + std::to_string(::getpid()) + "." + tag; }

sockaddr_un abstract(const std::string& name, socklen_t& len) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path + 1, name.data(), name.size());
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    return a;
}

enum class Act {
    squat,    // binds the name first, and releases at once whoever connects
    connect,  // connects `n` times to the real barrier, as members would, and holds the connections
};

// A process of uid and gid 12345 doing `act` on `name`; returns once it did
// (or failed: then the pid is -1). Killed by the caller, or after 20 s.
pid_t stranger(Act act, const std::string& name, unsigned n) {
    int p[2];
    if (::pipe(p) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        ::close(p[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::alarm(20);
        if (::setgroups(0, nullptr) != 0 || ::setresgid(kStranger, kStranger, kStranger) != 0 ||
            ::setresuid(kStranger, kStranger, kStranger) != 0)
            ::_exit(1);
        socklen_t len = 0;
        const sockaddr_un a = abstract(name, len);
        std::vector<int> held;
        if (act == Act::squat) {
            const int l = ::socket(AF_UNIX, SOCK_STREAM, 0);
            if (l < 0 || ::bind(l, reinterpret_cast<const sockaddr*>(&a), len) != 0 || ::listen(l, 64) != 0) ::_exit(1);
            (void)!::write(p[1], "r", 1);
            for (;;) {  // what a member waits for: end-of-file, at once
                const int c = ::accept(l, nullptr, nullptr);
                if (c >= 0) ::close(c);
            }
        }
        for (unsigned i = 0; i < n; ++i) {
            const int c = ::socket(AF_UNIX, SOCK_STREAM, 0);
            if (c < 0 || ::connect(c, reinterpret_cast<const sockaddr*>(&a), len) != 0) ::_exit(1);
            held.push_back(c);
        }
        (void)!::write(p[1], "r", 1);
        for (;;) ::pause();
    }
    ::close(p[1]);
    char c = 0;
    const bool ready = ::read(p[0], &c, 1) == 1;
    ::close(p[0]);
    if (!ready) {
        ::waitpid(pid, nullptr, 0);
        return -1;
    }
    return pid;
}

void end(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

}  // namespace

TEST_CASE("exit barrier: the members leave together, once all arrived", "[barrier]") {
    const std::string name = test_name("plain");
    NodeExitBarrier leader(name, true, 3);
    double left[2] = {0, 0};
    bool ok[2] = {false, false};
    const auto t0 = Clock::now();
    std::vector<std::thread> members;
    for (int i = 0; i < 2; ++i)
        members.emplace_back([&, i] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200 * (i + 1)));
            NodeExitBarrier m(name, false, 3);
            ok[i] = static_cast<bool>(m.arrive(5));
            left[i] = since(t0);
        });
    const bool led = static_cast<bool>(leader.arrive(5));
    const double leader_left = since(t0);
    for (auto& t : members) t.join();
    CHECK(led);
    CHECK(ok[0]);
    CHECK(ok[1]);
    CHECK(leader_left >= 0.35);  // not before the last member (0.4 s)
    CHECK(leader_left < 3);      // and not by the timeout
    CHECK(left[0] >= 0.35);      // the first member waited for the second
    CHECK(left[1] < 3);
}

TEST_CASE("exit barrier: another user's connections release nobody and hold nobody", "[barrier]") {
    if (::geteuid() != 0) {
        WARN("not root: another uid cannot be taken; skipped");
        return;
    }
    const std::string name = test_name("connect");
    NodeExitBarrier leader(name, true, 3);  // listens from here, as after fence #1
    // The stranger connects twice, what the two other members would do, and
    // holds both connections; they wait in the backlog for the leader.
    const pid_t s = stranger(Act::connect, name, 2);
    REQUIRE(s > 0);
    const auto t0 = Clock::now();
    bool ok[2] = {false, false};
    std::vector<std::thread> members;
    for (int i = 0; i < 2; ++i)
        members.emplace_back([&, i] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            NodeExitBarrier m(name, false, 3);
            ok[i] = static_cast<bool>(m.arrive(4));
        });
    const auto r = leader.arrive(4);
    const double leader_left = since(t0);
    for (auto& t : members) t.join();
    end(s);
    // Before the fix the stranger's two connections counted: released at once.
    CHECK(leader_left >= 0.25);
    // The real members completed it, well before the timeout.
    CHECK(leader_left < 3);
    CHECK(ok[0]);
    CHECK(ok[1]);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), Catch::Matchers::ContainsSubstring("refused 2 connection(s) from uid 12345") &&
                              Catch::Matchers::ContainsSubstring("released nobody"));
    CHECK(r.error().find('\n') == std::string::npos);
}

TEST_CASE("exit barrier: a name another user took first neither releases early nor hangs", "[barrier]") {
    if (::geteuid() != 0) {
        WARN("not root: another uid cannot be taken; skipped");
        return;
    }
    const std::string name = test_name("squat");
    // The stranger binds the name first and releases whoever connects at once.
    const pid_t s = stranger(Act::squat, name, 0);
    REQUIRE(s > 0);
    NodeExitBarrier leader(name, true, 2);  // cannot listen
    const double timeout = 1.0;
    const auto t0 = Clock::now();
    double member_left = 0;
    bool member_ok = true;
    std::string member_error;
    std::thread member([&] {
        NodeExitBarrier m(name, false, 2);
        const auto r = m.arrive(timeout);
        member_ok = static_cast<bool>(r);
        member_error = r.error();
        member_left = since(t0);
    });
    const auto r = leader.arrive(timeout);
    const double leader_left = since(t0);
    member.join();
    end(s);
    // Before the fix the leader returned at once and the member took the
    // stranger's end-of-file as its release.
    CHECK(leader_left >= timeout - 0.01);
    CHECK(member_left >= timeout - 0.01);
    // Bounded: the timeout, not forever.
    CHECK(leader_left < timeout + 2);
    CHECK(member_left < timeout + 2);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), Catch::Matchers::ContainsSubstring("could not listen (the name is held by uid 12345)") &&
                              Catch::Matchers::ContainsSubstring("waited the full 1 s"));
    CHECK(r.error().find('\n') == std::string::npos);
    CHECK_FALSE(member_ok);
    CHECK_THAT(member_error, Catch::Matchers::ContainsSubstring("held by uid 12345"));
}
