// A small HTTP/1.1 client for gangway's own service (`fleet serve`): one
// request per connection (Connection: close), a deadline on the whole of it
// (connect, send, and the answer read to its end), the answer bounded in
// size. No TLS, no redirects, no chunked answers: serve sends none. The
// post-mortem's records go to /v1/stops with it, and `gangway postmortem`
// reads a job's timeline back (issue 33).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../base/result.hpp"
#include "sock.hpp"

namespace gangway::sys {

struct HttpUrl {
    std::string host;  // a name, an IPv4 address, or an IPv6 one (given in brackets)
    std::uint16_t port = 80;
    std::string path = "/";  // what followed the authority ("/" when nothing did)
};
// "http://HOST[:PORT][/PATH]"; anything else (https, a user, a fragment): a Failure saying what to give.
Result<HttpUrl> parse_http_url(std::string_view url);

struct HttpAnswer {
    unsigned status = 0;
    std::string body;
};

// One request to u's host and port for `target` (a path); the answer, or why
// there is none (connect refused, timed out, an answer over max_answer bytes
// or not HTTP). Names are looked up (getaddrinfo), the first address used.
Result<HttpAnswer> http_request(const HttpUrl& u, std::string_view method, std::string_view target,
                                const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body,
                                Deadline d, std::size_t max_answer = std::size_t(1) << 20);

}  // namespace gangway::sys
