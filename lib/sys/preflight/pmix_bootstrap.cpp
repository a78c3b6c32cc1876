#include "pmix_bootstrap.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstddef>
#include <vector>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "../../base/error.hpp"
#include "../../preflight/bootstrap.hpp"
#include "../run/deadline.hpp"
#include "config.h"

#ifdef HAVE_PMIX
#include <pmix.h>
#endif

namespace gangway::sys {

bool pmix_in_env() {
    const char* r = std::getenv("PMIX_RANK");
    const char* n = std::getenv("PMIX_NAMESPACE");
    return r && *r && n && *n;
}

namespace {
sockaddr_un abstract_addr(const std::string& name, socklen_t& len) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::size_t n = std::min(name.size(), sizeof a.sun_path - 2);
    std::memcpy(a.sun_path + 1, name.data(), n);  // sun_path[0] = 0: the abstract namespace
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
    return a;
}
void sleep_until(Deadline d) {
    while (ms_left(d) > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms_left(d)));
}
// The uid of the process at the other end of a connected UNIX socket: the one
// that connected (seen from accept's side) or that listened (from connect's).
std::optional<uid_t> peer_uid(int fd) {
    ucred c{};
    socklen_t len = sizeof c;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0 || len != sizeof c) return std::nullopt;
    return c.uid;
}
std::string uid_text(std::optional<uid_t> uid) { return uid ? "uid " + std::to_string(*uid) : "a process of unknown uid"; }
// A non-blocking connect: a UNIX socket connects at once or fails (EAGAIN
// when the listener's backlog is full), so it never blocks past a deadline.
int connect_now(const sockaddr_un& a, socklen_t len) {
    const int c = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c < 0) return -1;
    if (::connect(c, reinterpret_cast<const sockaddr*>(&a), len) == 0) return c;
    ::close(c);
    return -1;
}
std::string seconds_text(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", s);
    return b;
}
}  // namespace

NodeExitBarrier::NodeExitBarrier(const std::string& name, bool leader, unsigned members)
    : name_(name), leader_(leader), members_(members) {
    if (!leader_ || members_ < 2) return;
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) {
        cannot_listen_ = std::string("socket: ") + std::strerror(errno);
        return;
    }
    socklen_t len = 0;
    const sockaddr_un a = abstract_addr(name_, len);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&a), len) != 0 || ::listen(fd_, 1024) != 0) {
        const int e = errno;
        ::close(fd_);
        fd_ = -1;
        cannot_listen_ = std::strerror(e);
        if (e == EADDRINUSE) {  // who holds it: the listener's uid, as a connecting task would see it
            const int c = connect_now(a, len);
            cannot_listen_ = "the name is held by " + (c >= 0 ? uid_text(peer_uid(c)) : std::string("another process"));
            if (c >= 0) ::close(c);
        }
    }
}

NodeExitBarrier::~NodeExitBarrier() {
    if (fd_ >= 0) ::close(fd_);
}

Result<void> NodeExitBarrier::arrive(double timeout_s) {
    if (members_ < 2) return {};
    const Deadline until = after_ms(static_cast<long>(timeout_s * 1000));
    const uid_t me = ::geteuid();
    const std::string what = "the exit barrier of this node's tasks (abstract socket @" + name_ + ")";
    if (leader_) {
        if (fd_ < 0) {
            // Nobody can release the others: they wait out the timeout (a
            // listener of another uid releases nobody), and so does this one.
            sleep_until(until);
            return Failure{what + " could not listen (" + cannot_listen_ + "): each task waited the full " +
                           seconds_text(timeout_s) + " s instead of leaving with the others"};
        }
        std::vector<int> peers;
        unsigned refused = 0;
        std::optional<uid_t> stranger;
        while (peers.size() + 1 < members_ && ms_left(until) > 0) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, std::min(ms_left(until), 100)) <= 0) continue;
            for (;;) {
                const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
                if (c < 0) break;
                const auto uid = peer_uid(c);
                if (uid && *uid == me) {
                    peers.push_back(c);
                } else {  // counts for nothing: closed at once
                    ++refused;
                    stranger = uid;
                    ::close(c);
                }
            }
        }
        for (int c : peers) ::close(c);  // the release: they read end-of-file
        ::close(fd_);
        fd_ = -1;
        if (refused)
            return Failure{what + " refused " + std::to_string(refused) + " connection(s) from " + uid_text(stranger) +
                           ", not this job's user (uid " + std::to_string(me) + "): another user on this node tried to "
                           "release or hold the tasks; they released nobody"};
        return {};
    }
    socklen_t len = 0;
    const sockaddr_un a = abstract_addr(name_, len);
    while (ms_left(until) > 0) {
        const int c = connect_now(a, len);
        if (c < 0) {  // not listening yet, or its backlog full: try again
            std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20, ms_left(until))));
            continue;
        }
        if (const auto uid = peer_uid(c); !uid || *uid != me) {
            // A stranger holds the name: it must not release this task; the
            // first task cannot listen either, so nobody will. Wait it out.
            ::close(c);
            sleep_until(until);
            return Failure{what + " is held by " + uid_text(uid) + ", not this job's user: waited the full " +
                           seconds_text(timeout_s) + " s"};
        }
        pollfd p{c, POLLIN, 0};
        while (::poll(&p, 1, ms_left(until)) < 0 && errno == EINTR) {
        }  // end-of-file: released
        ::close(c);
        return {};
    }
    return {};
}

#ifndef HAVE_PMIX

bool pmix_built() { return false; }
std::optional<PmixSession> pmix_init(double, std::string& err) {
    err = "built without PMIx";
    return std::nullopt;
}
bool pmix_fence(PmixSession&, const preflight::Kv*, bool, double, std::string& err) {
    err = "built without PMIx";
    return false;
}
std::optional<preflight::Kv> pmix_get(PmixSession&, unsigned, double, std::string& err) {
    err = "built without PMIx";
    return std::nullopt;
}
void pmix_finalize(PmixSession& s, double) { s.finalized = true; }

#else

namespace {

constexpr const char* kKey = "gangway.preflight";

// One pending PMIx operation. Shared by the waiter and the callback, so that a
// waiter that gave up leaves the callback (if it ever comes) something valid.
struct Op {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    pmix_status_t status = PMIX_ERROR;
    bool has_value = false;
    std::string value;
    pmix_info_t* info = nullptr;  // must outlive the operation
    std::size_t ninfo = 0;
    pmix_proc_t proc{};
    ~Op() {
        if (info) PMIX_INFO_FREE(info, ninfo);
    }
};

void complete(std::shared_ptr<Op>* holder, pmix_status_t st, const pmix_value_t* v) {
    {
        auto& op = **holder;
        std::lock_guard<std::mutex> l(op.mu);
        op.status = st;
        if (v && v->type == PMIX_STRING && v->data.string) {
            op.value = v->data.string;
            op.has_value = true;
        }
        op.done = true;
        op.cv.notify_all();
    }
    delete holder;
}

void op_cb(pmix_status_t st, void* cbdata) { complete(static_cast<std::shared_ptr<Op>*>(cbdata), st, nullptr); }
void value_cb(pmix_status_t st, pmix_value_t* kv, void* cbdata) { complete(static_cast<std::shared_ptr<Op>*>(cbdata), st, kv); }

// Waits for the operation until timeout_s; false when it did not complete.
bool wait_op(Op& op, double timeout_s) {
    std::unique_lock<std::mutex> l(op.mu);
    return op.cv.wait_for(l, std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)), [&] { return op.done; });
}

std::shared_ptr<Op> new_op(int timeout_s, bool collect) {
    auto op = std::make_shared<Op>();
    op->ninfo = collect ? 2 : 1;
    PMIX_INFO_CREATE(op->info, op->ninfo);
    PMIX_INFO_LOAD(&op->info[0], PMIX_TIMEOUT, &timeout_s, PMIX_INT);
    if (collect) {
        bool yes = true;
        PMIX_INFO_LOAD(&op->info[1], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    }
    return op;
}

// Runs fn on a helper thread; false when it did not return within timeout_s
// (the thread is then left behind, detached).
template <class F>
bool bounded(F fn, double timeout_s) {
    struct State {
        std::mutex mu;
        std::condition_variable cv;
        bool done = false;
    };
    auto st = std::make_shared<State>();
    std::thread([st, fn]() mutable {
        fn();
        std::lock_guard<std::mutex> l(st->mu);
        st->done = true;
        st->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> l(st->mu);
    return st->cv.wait_for(l, std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)), [&] { return st->done; });
}

// Job-level data (PMIX_JOB_SIZE) is answered locally at once; still bounded.
std::optional<std::uint32_t> get_u32(const pmix_proc_t& proc, const char* key, double timeout_s, std::string& err) {
    auto op = new_op(preflight::pmix_timeout_arg(timeout_s), false);
    op->proc = proc;
    const std::string k = key;
    const bool ok = bounded(
        [op, k] {
            pmix_value_t* v = nullptr;
            pmix_status_t rc = PMIx_Get(&op->proc, k.c_str(), op->info, op->ninfo, &v);
            std::lock_guard<std::mutex> l(op->mu);
            if (rc == PMIX_SUCCESS && v) {
                if (v->type == PMIX_UINT32) op->value = std::to_string(v->data.uint32);
                else rc = PMIX_ERR_TYPE_MISMATCH;
                PMIX_VALUE_RELEASE(v);
            }
            op->status = rc;
            op->done = true;
        },
        timeout_s);
    std::lock_guard<std::mutex> l(op->mu);
    if (!ok || !op->done) {
        err = std::string("PMIx_Get ") + key + " did not answer";
        return std::nullopt;
    }
    if (op->status != PMIX_SUCCESS) {
        err = std::string("PMIx_Get ") + key + ": " + PMIx_Error_string(op->status);
        return std::nullopt;
    }
    return static_cast<std::uint32_t>(std::stoul(op->value));
}

std::optional<std::string> get_string(const pmix_proc_t& proc, const char* key, double timeout_s, std::string& err) {
    auto op = new_op(preflight::pmix_timeout_arg(timeout_s), false);
    op->proc = proc;
    auto* holder = new std::shared_ptr<Op>(op);
    const pmix_status_t rc = PMIx_Get_nb(&op->proc, key, op->info, op->ninfo, value_cb, holder);
    if (rc != PMIX_SUCCESS) {
        delete holder;
        err = std::string("PMIx_Get ") + key + ": " + PMIx_Error_string(rc);
        return std::nullopt;
    }
    if (!wait_op(*op, timeout_s)) {
        err = std::string("PMIx_Get ") + key + " did not answer within " + std::to_string(preflight::pmix_timeout_arg(timeout_s)) + " s";
        return std::nullopt;
    }
    std::lock_guard<std::mutex> l(op->mu);
    if (op->status != PMIX_SUCCESS) {
        err = std::string("PMIx_Get ") + key + ": " + PMIx_Error_string(op->status);
        return std::nullopt;
    }
    if (!op->has_value) {
        err = std::string("PMIx_Get ") + key + ": not a string";
        return std::nullopt;
    }
    return op->value;
}

}  // namespace

bool pmix_built() { return true; }

std::optional<PmixSession> pmix_init(double timeout_s, std::string& err) {
    if (!pmix_in_env()) {
        err = "PMIX_RANK/PMIX_NAMESPACE are not set";
        return std::nullopt;
    }
    auto res = std::make_shared<std::pair<pmix_status_t, pmix_proc_t>>();
    res->first = PMIX_ERROR;
    if (!bounded([res] { res->first = PMIx_Init(&res->second, nullptr, 0); }, timeout_s)) {
        err = "PMIx_Init did not return within " + std::to_string(static_cast<int>(timeout_s)) + " s";
        return std::nullopt;
    }
    if (res->first != PMIX_SUCCESS) {
        err = std::string("PMIx_Init: ") + PMIx_Error_string(res->first);
        return std::nullopt;
    }
    PmixSession s;
    s.nspace = res->second.nspace;
    s.rank = res->second.rank;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, res->second.nspace, PMIX_RANK_WILDCARD);
    const auto size = get_u32(wild, PMIX_JOB_SIZE, timeout_s, err);
    if (!size) {
        pmix_finalize(s, 2);
        return std::nullopt;
    }
    s.size = *size;
    return s;
}

bool pmix_fence(PmixSession& s, const preflight::Kv* mine, bool collect, double timeout_s, std::string& err) {
    if (mine) {
        const std::string text = preflight::encode_kv(*mine);
        pmix_value_t v;
        PMIX_VALUE_LOAD(&v, text.c_str(), PMIX_STRING);  // copies
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, kKey, &v);
        PMIX_VALUE_DESTRUCT(&v);
        if (rc != PMIX_SUCCESS) {
            err = std::string("PMIx_Put: ") + PMIx_Error_string(rc);
            return false;
        }
        rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) {
            err = std::string("PMIx_Commit: ") + PMIx_Error_string(rc);
            return false;
        }
    }
    auto op = new_op(preflight::pmix_timeout_arg(timeout_s), collect);
    PMIX_LOAD_PROCID(&op->proc, s.nspace.c_str(), PMIX_RANK_WILDCARD);
    auto* holder = new std::shared_ptr<Op>(op);
    const pmix_status_t rc = PMIx_Fence_nb(&op->proc, 1, op->info, op->ninfo, op_cb, holder);
    if (rc != PMIX_SUCCESS) {
        delete holder;
        err = std::string("PMIx_Fence: ") + PMIx_Error_string(rc);
        return false;
    }
    if (!wait_op(*op, timeout_s)) {
        err = "the PMIx fence did not complete within " + std::to_string(static_cast<int>(timeout_s + 0.5)) + " s";
        return false;
    }
    if (op->status != PMIX_SUCCESS) {
        err = std::string("the PMIx fence failed: ") + PMIx_Error_string(op->status);
        return false;
    }
    return true;
}

std::optional<preflight::Kv> pmix_get(PmixSession& s, unsigned rank, double timeout_s, std::string& err) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, s.nspace.c_str(), rank);
    auto text = get_string(p, kKey, timeout_s, err);
    if (!text) return std::nullopt;
    try {
        return preflight::decode_kv(*text);
    } catch (const Error& e) {
        err = std::string("rank ") + std::to_string(rank) + "'s PMIx data: " + e.what();
        return std::nullopt;
    }
}

void pmix_finalize(PmixSession& s, double timeout_s) {
    if (s.finalized) return;
    s.finalized = true;
    bounded([] { PMIx_Finalize(nullptr, 0); }, timeout_s);
}

#endif

}  // namespace gangway::sys
