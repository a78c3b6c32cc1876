#include "wire.hpp"

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "crypto.hpp"

namespace gangway::preflight {
namespace {

bool needs_escape(char c) { return c == '%' || c == '=' || c == '\n' || static_cast<unsigned char>(c) < 0x20; }

void escape_into(std::string& out, std::string_view s) {
    static const char* digits = "0123456789ABCDEF";
    for (char c : s) {
        if (needs_escape(c)) {
            out += '%';
            out += digits[static_cast<unsigned char>(c) >> 4];
            out += digits[static_cast<unsigned char>(c) & 15];
        } else {
            out += c;
        }
    }
}

std::string unescape(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        if (i + 2 >= s.size()) throw Error("malformed message: truncated %-escape");
        out += from_hex(s.substr(i + 1, 2));
        i += 2;
    }
    return out;
}

void put_u64(std::string& s, std::uint64_t v) {
    for (int i = 7; i >= 0; --i) s += char(v >> (8 * i));
}

std::uint64_t get_u64(std::string_view s) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(s[i]);
    return v;
}

}  // namespace

std::string encode_kv(const Kv& kv) {
    std::string out;
    for (const auto& [k, v] : kv) {
        escape_into(out, k);
        out += '=';
        escape_into(out, v);
        out += '\n';
    }
    return out;
}

Kv decode_kv(std::string_view text) {
    Kv kv;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) throw Error("malformed message: last line has no newline");
        const auto line = text.substr(pos, nl - pos);
        pos = nl + 1;
        const auto eq = line.find('=');
        if (eq == std::string_view::npos || eq == 0) throw Error("malformed message: a line is not key=value");
        auto key = unescape(line.substr(0, eq));
        if (kv.count(key)) throw Error("malformed message: key \"" + key + "\" appears twice");
        kv.emplace(std::move(key), unescape(line.substr(eq + 1)));
    }
    return kv;
}

std::string kv_str(const Kv& kv, const std::string& key) {
    auto it = kv.find(key);
    if (it == kv.end()) throw Error("malformed message: no \"" + key + "\"");
    return it->second;
}

std::uint64_t kv_u64(const Kv& kv, const std::string& key) {
    const auto s = kv_str(kv, key);
    if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
        throw Error("malformed message: \"" + key + "\" is not a number");
    const auto v = parse_uint<std::uint64_t>(s);
    if (!v) throw Error("malformed message: \"" + key + "\" is out of range");
    return *v;
}

double kv_f64(const Kv& kv, const std::string& key) {
    const auto v = parse_double(kv_str(kv, key));
    if (!v) throw Error("malformed message: \"" + key + "\" is not a number");
    return *v;
}

Channel::Channel(std::string_view key, std::string_view server_nonce, std::string_view client_nonce, Role self) : self_(self) {
    if (server_nonce.size() != kNonceBytes || client_nonce.size() != kNonceBytes)
        throw Error("internal: channel nonces must be 16 bytes");
    std::string label = "gangway-preflight-2 session";
    label += server_nonce;
    label += client_nonce;
    const Digest d = hmac_sha256(key, label);
    session_key_.assign(reinterpret_cast<const char*>(d.data()), d.size());
}

Channel::~Channel() { wipe(session_key_); }

std::string Channel::mac(std::uint8_t dir, std::uint64_t seq, std::uint8_t type, std::string_view payload) const {
    std::string m = "gangway-preflight-2 frame";
    m += char(dir);
    put_u64(m, seq);
    m += char(type);
    m += payload;
    const Digest d = hmac_sha256(session_key_, m);
    return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

std::string Channel::seal(std::uint8_t type, std::string_view payload) {
    const std::size_t body = 1 + 8 + payload.size() + kMacBytes;
    if (body > kMaxFrame) throw Error("internal: preflight message too large (" + std::to_string(body) + " bytes)");
    std::string out;
    out.reserve(4 + body);
    for (int i = 3; i >= 0; --i) out += char(body >> (8 * i));
    const std::uint64_t seq = ++send_seq_;
    out += char(type);
    put_u64(out, seq);
    out += payload;
    out += mac(static_cast<std::uint8_t>(self_), seq, type, payload);
    return out;
}

std::size_t Channel::body_length(std::string_view p, std::size_t limit) {
    if (p.size() != 4) throw Error("malformed message: short length prefix");
    std::size_t n = 0;
    for (int i = 0; i < 4; ++i) n = n << 8 | static_cast<unsigned char>(p[i]);
    if (n > limit)
        throw Error("malformed message: frame of " + std::to_string(n) + " bytes exceeds the limit of " + std::to_string(limit) +
                    (limit < kMaxFrame ? " before authentication" : ""));
    if (n < 1 + 8 + kMacBytes) throw Error("malformed message: frame too short");
    return n;
}

Channel::Frame Channel::open(std::string_view body) {
    if (body.size() < 1 + 8 + kMacBytes || body.size() > kMaxFrame) throw Error("malformed message: bad frame size");
    const std::uint8_t type = static_cast<std::uint8_t>(body[0]);
    const std::uint64_t seq = get_u64(body.substr(1, 8));
    const auto payload = body.substr(9, body.size() - 9 - kMacBytes);
    const auto got = body.substr(body.size() - kMacBytes);
    const std::uint8_t peer = self_ == Role::client ? std::uint8_t(Role::server) : std::uint8_t(Role::client);
    if (!equal_ct(got, mac(peer, seq, type, payload)))
        throw Error("message failed authentication (wrong GANGWAY_SECRET, or not from this job step)");
    if (seq != recv_seq_ + 1) throw Error("message out of sequence (replayed or reordered)");
    recv_seq_ = seq;
    return Frame{type, std::string(payload)};
}

std::string key_from_secret(std::string_view hex) {
    if (hex.size() != 64)
        throw Error("GANGWAY_SECRET must be 64 hex digits (it has " + std::to_string(hex.size()) +
                    " characters); the gangway plugin sets it in srun: check that plugstack.conf loads gangway.so");
    try {
        return from_hex(hex);
    } catch (const Error&) {
        throw Error("GANGWAY_SECRET is not hex; the gangway plugin sets it in srun: do not set it yourself");
    }
}

std::string insecure_key() { return "gangway-insecure-test-key"; }

}  // namespace gangway::preflight
