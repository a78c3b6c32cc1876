// The preflight's wire format: length-prefixed frames, each authenticated with
// HMAC-SHA256 under a session key drawn from the step's secret and both sides'
// nonces, and bound to the direction and a sequence number, so a frame can be
// neither forged, replayed on another connection (in either direction),
// reflected back, nor reordered. Payloads are small key=value maps. Pure:
// sockets live in lib/sys/net/sock.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace gangway::preflight {

using Kv = std::map<std::string, std::string>;

// "k=v\n" lines; '%', '=', '\n' and control bytes in keys and values are
// %XX-escaped. decode_kv throws gangway::Error on a malformed payload.
//
// decode_kv's cost (SECURITY.md, "What a parser may spend"): O(n log n) (a map insert a
// line); memory a map node a line, at most 32 bytes a byte of text. A frame
// is at most kMaxFrame (1 MiB), kMaxFirstFrame (64 KiB) before authentication.
std::string encode_kv(const Kv& kv);
Kv decode_kv(std::string_view text);

// Typed lookups that throw gangway::Error naming the key when it is absent or malformed.
// kv_str returns a copy: callers pass temporary keys (p + "name"), and a reference
// returned next to a temporary argument is what GCC 14's -Wdangling-reference
// warns of; the values are short.
std::string kv_str(const Kv& kv, const std::string& key);
std::uint64_t kv_u64(const Kv& kv, const std::string& key);
double kv_f64(const Kv& kv, const std::string& key);

inline constexpr std::size_t kNonceBytes = 16;
inline constexpr std::size_t kMacBytes = 32;
inline constexpr std::size_t kMaxFrame = 1u << 20;  // body bytes; larger frames are refused unread
// Before a connection has authenticated (its first frame: a hello or a data
// request), its frames are limited to this: a hello carries a card, which
// card_to_kv keeps under kMaxCardBytes (card.hpp), and the rest is a few lines.
inline constexpr std::size_t kMaxFirstFrame = 64u << 10;

enum class Role : std::uint8_t { client = 1, server = 2 };

// One side of one connection. Each side draws a nonce and sends it in the
// clear first (the client on connecting, the server on accepting); both then
// seal and open frames with the session key HMAC(key, label, server nonce,
// client nonce), so a transcript recorded from one connection fails on any
// other whichever side replays it.
// Frame: u32 big-endian body length, body = u8 type, u64 seq, payload, MAC.
class Channel {
public:
    Channel(std::string_view key, std::string_view server_nonce, std::string_view client_nonce, Role self);
    Channel(Channel&&) = default;
    Channel& operator=(Channel&&) = default;
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;
    ~Channel();  // wipes the session key
    // The whole frame, length prefix included.
    std::string seal(std::uint8_t type, std::string_view payload);
    // Body length from the 4-byte prefix; throws gangway::Error when over
    // `limit` (kMaxFrame, or kMaxFirstFrame before authentication) or too short.
    static std::size_t body_length(std::string_view prefix4, std::size_t limit = kMaxFrame);
    struct Frame {
        std::uint8_t type = 0;
        std::string payload;
    };
    // Verifies the body (without the prefix): MAC, direction, sequence.
    // Throws gangway::Error on anything wrong; the connection must then be dropped.
    Frame open(std::string_view body);

private:
    std::string mac(std::uint8_t dir, std::uint64_t seq, std::uint8_t type, std::string_view payload) const;
    std::string session_key_;
    Role self_;
    std::uint64_t send_seq_ = 0, recv_seq_ = 0;
};

// The key from GANGWAY_SECRET's 64 hex digits; throws gangway::Error saying
// what is wrong with it. insecure_key() is the fixed key of --insecure.
std::string key_from_secret(std::string_view hex);
std::string insecure_key();

}  // namespace gangway::preflight
