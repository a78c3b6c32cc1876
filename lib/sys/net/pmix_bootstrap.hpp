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

#include "../../preflight/wire.hpp"

namespace gangway::cli {

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
// when every one of them arrived, or after the timeout. Nothing is trusted
// from the socket: a stranger can at most end the wait early or make it last
// the timeout.
class NodeExitBarrier {
public:
    NodeExitBarrier(const std::string& name, bool leader, unsigned members);
    ~NodeExitBarrier();
    void arrive(double timeout_s);

private:
    std::string name_;
    bool leader_;
    unsigned members_;
    int fd_ = -1;
};

}  // namespace gangway::cli
