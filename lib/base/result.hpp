// What a function that does I/O returns: its value, or why there is none.
// The rule of the tree: pure code throws gangway::Error (error.hpp) for input
// it rejects; code that talks to the network or the system returns a Result,
// because failing is one of its ordinary outcomes (a peer gone, a deadline
// passed) and only the caller knows what that failure means. Either way the
// message is for the user as it stands.
#pragma once
#include <optional>
#include <string>
#include <utility>

namespace gangway {

// The failed half of any Result: `return Failure{"connect timed out"};`.
struct Failure {
    std::string error;
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : value_(std::move(value)) {}
    Result(Failure f) : error_(std::move(f.error)) {}

    explicit operator bool() const { return value_.has_value(); }
    T& operator*() & { return *value_; }
    const T& operator*() const& { return *value_; }
    T&& operator*() && { return std::move(*value_); }
    T* operator->() { return &*value_; }
    const T* operator->() const { return &*value_; }
    const std::string& error() const { return error_; }  // empty when it succeeded

private:
    std::optional<T> value_;
    std::string error_;
};

// Success carries nothing: `return {};`.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Failure f) : ok_(false), error_(std::move(f.error)) {}

    explicit operator bool() const { return ok_; }
    const std::string& error() const { return error_; }

private:
    bool ok_ = true;
    std::string error_;
};

}  // namespace gangway
