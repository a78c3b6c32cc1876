#include "http_client.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "../../base/text.hpp"
#include "../run/deadline.hpp"  // within: the name lookup

namespace gangway::sys {

Result<HttpUrl> parse_http_url(std::string_view url) {
    const std::string what = "URL " + excerpt(url) + ": ";
    constexpr std::string_view scheme = "http://";
    if (!url.starts_with(scheme)) return Failure{what + "give http://HOST:PORT, e.g. http://admin1:9464 (fleet serve's --listen)"};
    std::string_view rest = url.substr(scheme.size());
    const auto slash = rest.find('/');
    const std::string_view authority = rest.substr(0, slash);
    HttpUrl u;
    u.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
    if (authority.find('@') != std::string_view::npos || u.path.find('#') != std::string::npos)
        return Failure{what + "no user or fragment: give http://HOST:PORT"};
    std::string_view port;
    if (authority.starts_with('[')) {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return Failure{what + "an IPv6 address needs its closing ']'"};
        u.host = std::string(authority.substr(1, close - 1));
        if (authority.size() > close + 1) {
            if (authority[close + 1] != ':') return Failure{what + "after [ADDR] comes :PORT"};
            port = authority.substr(close + 2);
        }
    } else {
        const auto colon = authority.rfind(':');
        u.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    }
    if (u.host.empty()) return Failure{what + "no host"};
    if (!port.empty()) {
        const auto p = parse_uint<std::uint16_t>(port);
        if (!p || *p == 0) return Failure{what + "the port must be a number from 1 to 65535"};
        u.port = *p;
    }
    return u;
}

namespace {

// The host's first address as text. A numeric address is taken as it is;
// a name is looked up in a thread of its own, waited for until the deadline:
// getaddrinfo has no deadline, and a resolver that does not answer held the
// Epilog's collector for the resolver's timeouts (5 s a server, twice,
// each), past SLURM's Epilog timeout, which drains the node. A lookup
// past the deadline is left behind, owning its copy of the name.
Result<std::string> lookup(const std::string& host) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc != 0 || !res) return Failure{"cannot look up " + excerpt(host) + ": " + ::gai_strerror(rc)};
    char buf[NI_MAXHOST];
    const int n = ::getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST);
    ::freeaddrinfo(res);
    if (n != 0) return Failure{"cannot look up " + excerpt(host) + ": " + ::gai_strerror(n)};
    return std::string(buf);
}

Result<std::string> address_of(const std::string& host, Deadline d) {
    in6_addr probe{};
    if (::inet_pton(AF_INET, host.c_str(), &probe) == 1 || ::inet_pton(AF_INET6, host.c_str(), &probe) == 1) return host;
    try {
        // The one wait for a call that cannot be interrupted (deadline.hpp).
        auto got = within<Result<std::string>>(ms_left(d) / 1000.0, [host] { return lookup(host); });
        if (!got) return Failure{"cannot look up " + excerpt(host) + ": no answer from the resolver within the deadline (give an address)"};
        return std::move(*got);
    } catch (const std::system_error& e) {
        return Failure{"cannot look up " + excerpt(host) + ": no thread for it (" + e.what() + ")"};
    }
}

}  // namespace

Result<HttpAnswer> http_request(const HttpUrl& u, std::string_view method, std::string_view target,
                                const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body,
                                Deadline d, std::size_t max_answer) {
    const std::string where = "http://" + (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host) + ":" +
                              std::to_string(u.port);
    auto addr = address_of(u.host, d);
    if (!addr) return Failure{addr.error()};
    auto fd = tcp_connect(*addr, u.port, d);
    if (!fd) return Failure{where + ": " + fd.error()};
    std::string req = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: " + u.host + "\r\n" +
                      "Connection: close\r\n";
    for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
    if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n";
    req.append(body);
    if (auto s = send_all(fd->get(), req, d); !s) return Failure{where + ": " + s.error()};
    std::string in;
    char buf[16384];
    for (;;) {
        if (!wait_readable(fd->get(), d)) return Failure{where + ": timed out waiting for the answer"};
        const ssize_t n = ::recv(fd->get(), buf, sizeof buf, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n < 0) return Failure{where + ": recv: " + std::strerror(errno)};
        if (n == 0) break;
        in.append(buf, std::size_t(n));
        if (in.size() > max_answer) return Failure{where + ": the answer is over " + size_text(max_answer)};
    }
    // "HTTP/1.1 NNN reason\r\n" headers "\r\n\r\n" body.
    const auto head_end = in.find("\r\n\r\n");
    if (!in.starts_with("HTTP/1.") || in.size() < 12 || head_end == std::string::npos)
        return Failure{where + ": the answer is not HTTP (is this fleet serve's address?)"};
    const auto status = parse_uint<unsigned>(std::string_view(in).substr(9, 3));
    if (!status) return Failure{where + ": the answer has no status"};
    HttpAnswer a;
    a.status = *status;
    a.body = in.substr(head_end + 4);
    return a;
}

}  // namespace gangway::sys
