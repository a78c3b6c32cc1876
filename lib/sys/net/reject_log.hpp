// Rejected connections, told: one line each on stderr (the job's output) and
// in syslog (LOG_AUTH, where the admins look), so that a stranger knocking on
// a job's ports is seen. A flood cannot flood the logs: at most kBurst lines
// per kWindow, then one line with how many more there were.
#pragma once
#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

namespace gangway::sys {

// The listening port a connection was rejected on.
enum class Listener { rendezvous, data };
const char* to_string(Listener l);

class RejectLog {
public:
    static constexpr int kBurst = 10;
    static constexpr std::chrono::seconds kWindow{10};

    explicit RejectLog(Listener where) : where_(where) {}
    RejectLog(const RejectLog&) = delete;
    RejectLog& operator=(const RejectLog&) = delete;
    ~RejectLog();  // tells the count not yet told

    // A connection on `fd` (for its peer's address) was dropped because of `why`.
    // Safe from several threads.
    void note(int fd, std::string_view why);
    unsigned total() const;

private:
    void say(const std::string& line);
    void tell_unsaid();  // with mu_ held

    Listener where_;
    mutable std::mutex mu_;
    std::chrono::steady_clock::time_point window_start_{};
    int in_window_ = 0;
    unsigned unsaid_ = 0, total_ = 0;
};

// "10.0.0.5:43122" ("[fe80::1]:43122"), or "an unknown peer".
std::string peer_address(int fd);

}  // namespace gangway::sys
