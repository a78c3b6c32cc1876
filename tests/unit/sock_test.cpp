#include "catch_compat.hpp"

#include <sys/socket.h>

#include <thread>

#include "../../lib/base/result.hpp"
#include "../../lib/preflight/wire.hpp"
#include "../../lib/sys/net/rendezvous.hpp"
#include "../../lib/sys/net/sock.hpp"

using namespace gangway;
using namespace gangway::sys;

TEST_CASE("Result: a value, or why there is none") {
    Result<int> ok = 7;
    REQUIRE(ok);
    CHECK(*ok == 7);
    CHECK(ok.error().empty());
    Result<int> bad = Failure{"no value"};
    CHECK_FALSE(bad);
    CHECK(bad.error() == "no value");
    Result<void> done;
    CHECK(done);
    Result<void> failed = Failure{"gone"};
    CHECK_FALSE(failed);
    CHECK(failed.error() == "gone");
}

TEST_CASE("sockets: failures come back as results, saying why") {
    const auto bad = tcp_listen("not-an-address", 0, 1);
    CHECK_FALSE(bad);
    CHECK(bad.error() == "\"not-an-address\" is not an IP address");
    CHECK(tcp_connect("", 1, after_ms(100)).error() == "\"\" is not an IP address");

    // A port nobody listens on: refused, or (on a busy host) timed out, never an exception.
    auto l = tcp_listen("127.0.0.1", 0, 1);
    REQUIRE(l);
    const unsigned port = local_port(l->get());
    CHECK(port > 0);
    l->reset();
    const auto refused = tcp_connect("127.0.0.1", port, after_ms(500));
    CHECK_FALSE(refused);
    CHECK_FALSE(refused.error().empty());

    auto none = join({}, port, std::string(32, 'k'), {}, after_ms(50));
    CHECK_FALSE(none);
    CHECK(none.error() == "no address to try");
}

TEST_CASE("sockets: an authenticated connection carries frames both ways") {
    const std::string key(32, 'k');
    auto l = tcp_listen("127.0.0.1", 0, 4);
    REQUIRE(l);
    const unsigned port = local_port(l->get());
    Result<Conn> server = Failure{"not accepted"};
    std::thread accepter([&] {
        // No REQUIRE off the test's thread: the check below says whether it worked.
        if (wait_readable(l->get(), after_ms(2000))) server = accept_conn(tcp_accept(l->get()), key, after_ms(2000));
    });
    auto client = connect_conn("127.0.0.1", port, key, after_ms(2000));
    accepter.join();
    REQUIRE(client);
    REQUIRE(server);

    REQUIRE(client->send(3, {{"n", "1"}}, after_ms(1000)));
    auto got = server->recv(after_ms(1000));
    REQUIRE(got);
    CHECK(got->type == 3);
    CHECK(got->kv.at("n") == "1");

    // Nothing more: the deadline passes; the peer gone: the connection closed.
    CHECK(server->recv(after_ms(50)).error() == "timed out");
    ::shutdown(client->fd.get(), SHUT_RDWR);
    CHECK(server->recv(after_ms(1000)).error() == "connection closed");
    std::vector<Conn::Got> frames;
    CHECK(server->pump(frames).error() == "connection closed");
    CHECK(frames.empty());
}

TEST_CASE("sockets: a peer with another key is turned away") {
    auto l = tcp_listen("127.0.0.1", 0, 4);
    REQUIRE(l);
    const unsigned port = local_port(l->get());
    Result<Conn> server = Failure{"not accepted"};
    std::thread accepter([&] {
        if (wait_readable(l->get(), after_ms(2000)))
            server = accept_conn(tcp_accept(l->get()), std::string(32, 's'), after_ms(2000));
    });
    auto client = connect_conn("127.0.0.1", port, std::string(32, 'c'), after_ms(2000));
    accepter.join();
    REQUIRE(client);
    REQUIRE(server);
    REQUIRE(client->send(3, {{"n", "1"}}, after_ms(1000)));
    const auto got = server->recv(after_ms(1000));
    CHECK_FALSE(got);
    CHECK_FALSE(got.error().empty());
}

namespace {

// Everything that arrives on fd until it is quiet for `quiet_ms` or closes.
std::string read_until_quiet(int fd, long quiet_ms) {
    std::string got;
    char buf[4096];
    while (wait_readable(fd, after_ms(quiet_ms))) {
        const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
        if (r <= 0) break;
        got.append(buf, static_cast<std::size_t>(r));
    }
    return got;
}

}  // namespace

// Issue 15, item 15: with only the server's nonce, a stranger who recorded what a
// server sent on one connection could play it back to a client as a server.
TEST_CASE("sockets: a server's recorded transcript replayed to a client is refused") {
    const std::string key(32, 'k');
    auto l = tcp_listen("127.0.0.1", 0, 4);
    REQUIRE(l);
    std::thread server([&] {
        if (!wait_readable(l->get(), after_ms(2000))) return;
        auto c = accept_conn(tcp_accept(l->get()), key, after_ms(2000));
        if (!c) return;
        (void)c->send(7, {{"verdict", "ok"}}, after_ms(1000));
        wait_readable(c->fd.get(), after_ms(2000));
    });
    // The recorder plays a client: its own 16 bytes where a client sends its nonce, then it keeps
    // everything the server sends.
    auto rec = tcp_connect("127.0.0.1", local_port(l->get()), after_ms(2000));
    REQUIRE(rec);
    REQUIRE(send_all(rec->get(), std::string(preflight::kNonceBytes, 'r'), after_ms(1000)));
    const std::string transcript = read_until_quiet(rec->get(), 500);
    rec->reset();
    server.join();
    REQUIRE(transcript.size() > preflight::kNonceBytes);

    auto l2 = tcp_listen("127.0.0.1", 0, 4);
    REQUIRE(l2);
    std::thread fake([&] {
        if (!wait_readable(l2->get(), after_ms(2000))) return;
        Fd fd = tcp_accept(l2->get());
        (void)send_all(fd.get(), transcript, after_ms(1000));
        wait_readable(fd.get(), after_ms(2000));
    });
    auto client = connect_conn("127.0.0.1", local_port(l2->get()), key, after_ms(2000));
    bool took_it = false;
    if (client) {
        const auto got = client->recv(after_ms(1000));
        took_it = bool(got);
        if (!got) CHECK_THAT(got.error(), Catch::Matchers::ContainsSubstring("authentication"));
        ::shutdown(client->fd.get(), SHUT_RDWR);
    }
    fake.join();
    CHECK_FALSE(took_it);
}

// Issue 15, item 5: before authentication a connection may send only a hello's
// worth, and only so many may wait for their hello.
TEST_CASE("rendezvous: an oversized first frame is refused at its length") {
    auto l = tcp_listen("127.0.0.1", 0, 16);
    REQUIRE(l);
    const unsigned port = local_port(l->get());
    Coordinator coord(std::string(32, 'k'), std::move(*l));
    auto raw = tcp_connect("127.0.0.1", port, after_ms(1000));
    REQUIRE(raw);
    std::string big(preflight::kNonceBytes, 'c');
    big += std::string("\x00\x10\x00\x00", 4);  // a 1 MiB frame follows...
    big += std::string(1000, 'x');              // ...of which this much arrives
    REQUIRE(send_all(raw->get(), big, after_ms(1000)));
    CHECK(coord.gather(1, after_ms(1500)));
    CHECK(coord.rejected() == 1);
    CHECK(coord.members().empty());
}

TEST_CASE("rendezvous: stalled connections beyond the cap are dropped, oldest first, and a task still joins") {
    auto l = tcp_listen("127.0.0.1", 0, 1024);
    REQUIRE(l);
    const unsigned port = local_port(l->get());
    const std::string key(32, 'k');
    Coordinator coord(key, std::move(*l));
    std::vector<Fd> idle;
    // Each sends a nonce, as a client does, then stalls: past TCP_DEFER_ACCEPT.
    for (int i = 0; i < 400; ++i) {
        auto c = tcp_connect("127.0.0.1", port, after_ms(1000));
        if (c && send_all(c->get(), std::string(preflight::kNonceBytes, 'n'), after_ms(1000))) idle.push_back(std::move(*c));
    }
    REQUIRE(idle.size() == 400);
    Result<Conn> joined = Failure{"not run"};
    std::thread task([&] { joined = join({"127.0.0.1"}, port, key, {{"rank", "0"}, {"node_rank", "0"}, {"local", "0"}, {"speaker", "0"}}, after_ms(4000)); });
    CHECK(coord.gather(1, after_ms(4000)));
    task.join();
    CHECK(joined);
    CHECK(coord.members().size() == 1);
    CHECK(coord.rejected() >= 400 - 256);  // at most 256 wait for their hello at once
    CHECK(coord.rejected() <= 400);
}

// Issue 15, item 7: a connection that sends nothing does not reach accept()
// (TCP_DEFER_ACCEPT), so a flood of them takes no descriptor and no place in
// front of a client, which sends its nonce at once.
TEST_CASE("sockets: a silent connection waits in the kernel, one that speaks is accepted") {
    auto l = tcp_listen("127.0.0.1", 0, 16);
    REQUIRE(l);
    auto silent = tcp_connect("127.0.0.1", local_port(l->get()), after_ms(2000));
    REQUIRE(silent);
    CHECK_FALSE(wait_readable(l->get(), after_ms(500)));
    auto speaker = tcp_connect("127.0.0.1", local_port(l->get()), after_ms(2000));
    REQUIRE(speaker);
    REQUIRE(send_all(speaker->get(), std::string(preflight::kNonceBytes, 'n'), after_ms(1000)));
    REQUIRE(wait_readable(l->get(), after_ms(2000)));
    Fd got = tcp_accept(l->get());
    REQUIRE(got);
    char buf[preflight::kNonceBytes];
    CHECK(::recv(got.get(), buf, sizeof buf, MSG_DONTWAIT) == static_cast<ssize_t>(sizeof buf));
    // The silent one is not lost: it is accepted after the deferral.
    CHECK(wait_readable(l->get(), after_ms((kDeferAcceptS + 4) * 1000)));
}
