#include "crypto.hpp"

// SHA256_Init and friends are deprecated in OpenSSL 3 in favour of EVP, but
// they are the only libcrypto hash that takes no heap: EVP_MAC allocates a
// context and fetches its digest on every call, and OpenSSL 3.0 dereferences
// NULL when such an allocation fails (a data-port handler crashed with SIGSEGV
// in EVP_MAC_init when a flood had taken the task's address space:
// tests/preflight_hostile.sh, CI of 2026-11-25). HMAC (RFC 2104) over them
// cannot fail, and costs a fixed context on the stack.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cstring>

namespace gangway {

namespace {

constexpr std::size_t kBlock = SHA256_CBLOCK;  // 64 bytes

// Wipes the hash state and key pads when done: they are the secret in another form.
struct Sha256 {
    SHA256_CTX c;
    Sha256() { SHA256_Init(&c); }
    ~Sha256() { OPENSSL_cleanse(&c, sizeof c); }
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(const void* p, std::size_t n) { SHA256_Update(&c, p, n); }
    Digest finish() {
        Digest d{};
        SHA256_Final(d.data(), &c);
        return d;
    }
};

struct Pad {
    unsigned char b[kBlock];
    ~Pad() { OPENSSL_cleanse(b, sizeof b); }
};

}  // namespace

Digest hmac_sha256(std::string_view key, std::string_view data) {
    // A key longer than a block is hashed first; a shorter one is padded with zeros.
    Pad k{};
    if (key.size() > kBlock) {
        Sha256 h;
        h.update(key.data(), key.size());
        const Digest kd = h.finish();
        std::memcpy(k.b, kd.data(), kd.size());
    } else if (!key.empty()) {
        std::memcpy(k.b, key.data(), key.size());
    }
    Pad pad{};
    for (std::size_t i = 0; i < kBlock; ++i) pad.b[i] = static_cast<unsigned char>(k.b[i] ^ 0x36);
    Sha256 inner;
    inner.update(pad.b, kBlock);
    inner.update(data.data(), data.size());
    const Digest ih = inner.finish();
    for (std::size_t i = 0; i < kBlock; ++i) pad.b[i] = static_cast<unsigned char>(k.b[i] ^ 0x5c);
    Sha256 outer;
    outer.update(pad.b, kBlock);
    outer.update(ih.data(), ih.size());
    return outer.finish();
}

std::string to_hex(const Digest& d) {
    return gangway::to_hex(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

bool equal_ct(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

void wipe(std::string& s) {
    if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
    s.clear();
}

}  // namespace gangway
