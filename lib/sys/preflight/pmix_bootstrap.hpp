// The few PMIx calls of the preflight's bootstrap under srun --mpi=pmix, behind
// a plain interface. Every call that can block is bounded: fences and gets are
// the non-blocking PMIx calls waited for with a deadline (PMIX_TIMEOUT is
// passed too), init and finalize run on a helper thread that is abandoned when
// it overruns. Built without PMIx (configure found no pmix), pmix_built() is
// false and pmix_init() always fails.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "../../base/result.hpp"
#include "../../preflight/wire.hpp"

namespace gangway::sys {

bool pmix_built();
// PMIX_RANK and PMIX_NAMESPACE are set: the step was started with PMIx.
bool pmix_in_env();

struct PmixSession {
    std::string nspace;
    unsigned rank = 0, size = 0;  // this process's rank, the namespace's size (PMIX_JOB_SIZE)
    bool finalized = false;
};

std::optional<PmixSession> pmix_init(double timeout_s, std::string& err);

// Puts `mine` (when given) as this rank's gangway key, commits, and fences over
// the whole namespace (collecting the data when `collect`); false with `err`
// when the fence failed or did not complete within timeout_s.
bool pmix_fence(PmixSession& s, const preflight::Kv* mine, bool collect, double timeout_s, std::string& err);

// The gangway key that `rank` put before a collecting fence.
std::optional<preflight::Kv> pmix_get(PmixSession& s, unsigned rank, double timeout_s, std::string& err);

// Ends this process's PMIx session (before gangway run execs the command, whose
// own PMIx_Init then starts anew); gives up after timeout_s.
void pmix_finalize(PmixSession& s, double timeout_s);

// After PMIx_Finalize the tasks of one node leave together: a PMIx session that
// the next program of a task (the command gangway run starts) opens while a
// task of the same node still has its old one breaks that node's fences
// (seen with SLURM 22.05's mpi/pmix and PMIx 4.2). The node's first task
// listens on an abstract UNIX socket named after the step, before the verdict
// fence; each other task connects once it has finalized, and all are released
// when every one of them arrived, or after the timeout.
//
// Who is at the other end. The barrier runs in `gangway run`/`check`, in the
// tasks, so as the job's user (never root: the plugin's own check child uses
// the TCP bootstrap and never gets here). An abstract socket has no
// permissions: any process on the node can bind a name first or connect to
// it. So both ends check the other's uid with SO_PEERCRED, the kernel's word,
// taken when the peer connected (what the first task sees) or listened (what
// a connecting task sees): the first task counts only connections of its own
// uid and closes the others at once; a task waits only on a listener of its
// own uid. Why SO_PEERCRED rather than the step's HMAC or a socket file in a
// private directory: the members are all the job's user's processes on one
// node, so the uid is exactly the membership to prove; the kernel gives it
// for free, with no handshake, no key in this code and no byte read from a
// stranger; and no directory has to exist, be private and be cleaned up
// (a process of the same user could disturb the tasks in other ways anyway).
// The caller also puts a tag drawn from the step's secret in the name
// (preflight.cpp), so that a stranger cannot even guess it beforehand.
//
// When a stranger holds the name anyway, or the first task cannot listen,
// nobody is released by anyone else: every task waits out the timeout (so
// none leaves before the others finalized, and none waits longer), and
// arrive() fails with one line saying so. A stranger that connects to the
// real barrier releases nobody; arrive() still waits for the real members
// and then fails with one line naming the stranger's uid.
class NodeExitBarrier {
public:
    NodeExitBarrier(const std::string& name, bool leader, unsigned members);
    ~NodeExitBarrier();
    NodeExitBarrier(const NodeExitBarrier&) = delete;
    NodeExitBarrier& operator=(const NodeExitBarrier&) = delete;
    // Returns when released, or after timeout_s at most (a few ms more). Fails,
    // with one line for the first task's stderr, when the first task could not
    // listen (another user held the name) or when another user's process
    // connected to it or listened in its place: the wait was still bounded and
    // no such process released anyone.
    Result<void> arrive(double timeout_s);
    bool leader() const { return leader_; }

private:
    std::string name_;
    bool leader_;
    unsigned members_;
    int fd_ = -1;
    std::string cannot_listen_;  // the first task: why it does not listen ("" when it does)
};

}  // namespace gangway::sys
