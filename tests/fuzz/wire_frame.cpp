// A frame off the network, as the coordinator, a speaker or the data port
// takes it: the length prefix, then the body (type, sequence, payload, MAC).
// A stranger's bytes must be refused with gangway::Error; besides, whatever
// the input, sealing it as a payload and opening that again must give it
// back, and a payload that decodes must encode and decode to the same map.
#include <cstdlib>

#include "lib/preflight/wire.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace p = gangway::preflight;

namespace {

void must(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): a frame sealed and opened: a few copies; decode_kv: 32 n, then encoded (3 n)
    // and decoded again (32 n); and libcrypto's HMAC contexts, with its own start-up on the first input (108 KiB).
    const gangway::fuzz::HeapBudget budget(size, 96, 1u << 20);
    const auto in = gangway::fuzz::text(data, size);
    const std::string key(32, 'k'), sn(p::kNonceBytes, 's'), cn(p::kNonceBytes, 'c');
    gangway::fuzz::refusable([&] {
        p::Channel server(key, sn, cn, p::Role::server);
        const auto len = p::Channel::body_length(in.substr(0, 4), p::kMaxFirstFrame);
        (void)server.open(in.substr(4, len));
    });
    gangway::fuzz::refusable([&] {
        p::Channel client(key, sn, cn, p::Role::client), server(key, sn, cn, p::Role::server);
        const auto frame = client.seal(static_cast<std::uint8_t>(size), in);
        const auto got = server.open(std::string_view(frame).substr(4, p::Channel::body_length(frame.substr(0, 4))));
        must(got.payload == in);
    });
    gangway::fuzz::refusable([&] {
        const auto kv = p::decode_kv(in);
        must(p::decode_kv(p::encode_kv(kv)) == kv);
    });
    return 0;
}
