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
