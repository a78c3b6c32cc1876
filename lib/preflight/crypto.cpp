#include "crypto.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <memory>

#include "../base/error.hpp"

namespace gangway {

namespace {

struct MacFree {
    void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
};
struct CtxFree {
    void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

// Fetched once: the fetch looks the algorithm up in the providers, the MAC itself is cheap.
EVP_MAC* hmac() {
    static const std::unique_ptr<EVP_MAC, MacFree> mac(EVP_MAC_fetch(nullptr, OSSL_MAC_NAME_HMAC, nullptr));
    if (!mac) throw Error("libcrypto has no HMAC (check the OpenSSL installation)");
    return mac.get();
}

}  // namespace

Digest hmac_sha256(std::string_view key, std::string_view data) {
    const std::unique_ptr<EVP_MAC_CTX, CtxFree> ctx(EVP_MAC_CTX_new(hmac()));
    char digest_name[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
                                 OSSL_PARAM_construct_end()};
    static const unsigned char none = 0;  // an empty key still needs a pointer
    const auto* k = key.empty() ? &none : reinterpret_cast<const unsigned char*>(key.data());
    Digest d{};
    std::size_t len = 0;
    if (!ctx || EVP_MAC_init(ctx.get(), k, key.size(), params) != 1 ||
        EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1 ||
        EVP_MAC_final(ctx.get(), d.data(), &len, d.size()) != 1 || len != d.size())
        throw Error("libcrypto's HMAC-SHA256 failed (check the OpenSSL installation)");
    return d;
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
