// What every fuzz target shares. A parser of outside input may refuse it only
// with gangway::Error (the one error type of pure code): any other exception,
// a crash, a sanitizer report or a hang is a finding. libFuzzer, ASan and
// UBSan watch for the last three; an exception other than Error escapes
// LLVMFuzzerTestOneInput and aborts the run with its type in the log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/base/error.hpp"

namespace gangway::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Runs f; gangway::Error is a refusal, the expected answer to bad input.
template <class F>
void refusable(F&& f) {
    try {
        std::forward<F>(f)();
    } catch (const Error&) {
    }
}

// The input cut at its first '\n' into two fields (the second empty when there is none).
inline std::pair<std::string_view, std::string_view> two_fields(std::string_view in) {
    const auto nl = in.find('\n');
    if (nl == std::string_view::npos) return {in, {}};
    return {in.substr(0, nl), in.substr(nl + 1)};
}

}  // namespace gangway::fuzz
