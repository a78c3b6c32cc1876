// nccl_allreduce: this process's GPUs as ranks of one communicator, a
// warm-up whose result is checked, then a timed loop; a rank that fails or
// hangs aborts the communicators within the job's deadline.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "cuda_handles.hpp"
#include "nccl_api.hpp"
#include "nccl_stage.hpp"

namespace gangway::sys {
namespace {

// A communicator: destroyed when it goes, or aborted when the run failed or
// hung (destroy would wait for operations that may never finish).
class UniqueComm {
public:
    UniqueComm(const nccl::Api& n, const bool& abort) : n_(n), abort_(abort) {}
    UniqueComm(const UniqueComm&) = delete;
    UniqueComm& operator=(const UniqueComm&) = delete;
    ~UniqueComm() {
        if (c_) (abort_ ? n_.abort : n_.destroy)(c_);
    }
    nccl::Comm get() const { return c_; }
    nccl::Comm* out() { return &c_; }

private:
    const nccl::Api& n_;
    const bool& abort_;
    nccl::Comm c_ = nullptr;
};

// One rank of this process: a GPU with its context, buffer, stream, timing
// events and communicator. Its objects go in its own context, the
// communicator first, the context's reference last (members in reverse).
struct Rank {
    Rank(const cu::Api& a, const nccl::Api& n, const bool& abort) : ctx(a), buf(a), s(a), e0(a), e1(a), comm(n, abort) {}
    ~Rank() { ctx.make_current(); }
    cu::PrimaryContext ctx;
    cu::UniqueDeviceMem buf;
    cu::UniqueStream s;
    cu::UniqueEvent e0, e1;
    UniqueComm comm;
};

// One NcclJob in this process: its steps, each false with res.error when the
// run cannot go on. Everything it made goes with it, whichever step stopped.
class AllReduce {
public:
    AllReduce(const cu::Api& a, const nccl::Api& n, const NcclJob& job, gpu::NcclResult& res)
        : a_(a), n_(n), job_(job), res_(res),
          deadline_(after_s(job.deadline_s)),
          count_(static_cast<std::size_t>(job.bytes) / 4) {}

    void run() {
        if (open_devices() && init_comms() && warm_up()) {
            check_data();
            timed_loop();
        }
    }

private:
    bool open_devices();
    bool init_comms();
    bool warm_up();
    void check_data();
    void timed_loop();
    bool launch();
    bool settle(const char* what);
    bool wait_streams(const char* what);

    bool fail(std::string why) {
        res_.error = std::move(why);
        return false;
    }
    // The communicators are aborted, not destroyed, once a rank failed or hung.
    bool abort(std::string why) {
        aborted_ = true;
        return fail(std::move(why));
    }
    bool past_deadline(const char* what) {
        return abort(std::string(what) + " hung: communicator aborted after " + std::to_string(static_cast<int>(job_.deadline_s)) +
                     " s");
    }

    const cu::Api& a_;
    const nccl::Api& n_;
    const NcclJob& job_;
    gpu::NcclResult& res_;
    const Clock::time_point deadline_;
    const std::size_t count_;  // floats per rank
    bool aborted_ = false;     // before ranks_, whose communicators read it as they go
    std::deque<Rank> ranks_;   // a deque: Rank cannot move, and deque never moves its elements
};

// Per GPU: its primary context, the buffer (1.0f everywhere: the sum is
// nranks), a stream and two timing events.
bool AllReduce::open_devices() {
    cu::Result r = a_.init(0);
    if (r != cu::kSuccess) return fail("cuInit failed: " + a_.err(r));
    for (unsigned i = 0; i < job_.devices; ++i) {
        auto& d = ranks_.emplace_back(a_, n_, aborted_);
        const std::string gpu = "GPU " + std::to_string(i) + ": ";
        cu::Device dev{};
        if ((r = a_.device_get(&dev, static_cast<int>(i))) != cu::kSuccess || (r = d.ctx.retain(dev)) != cu::kSuccess)
            return fail(gpu + a_.err(r));
        d.ctx.make_current();
        if ((r = a_.mem_alloc(d.buf.out(), count_ * 4)) != cu::kSuccess) return fail(gpu + "allocation failed: " + a_.err(r));
        if ((r = a_.stream_create(d.s.out(), 1)) != cu::kSuccess || (r = a_.event_create(d.e0.out(), 0)) != cu::kSuccess ||
            (r = a_.event_create(d.e1.out(), 0)) != cu::kSuccess)
            return fail(gpu + a_.err(r));
        a_.memset_d32(d.buf.get(), 0x3f800000u, count_);
    }
    return true;
}

// Every rank joins in one group (non-blocking communicators from 2.14 on),
// then waits until all have left ncclInProgress.
bool AllReduce::init_comms() {
    nccl::UniqueId id;
    std::memcpy(id.internal, job_.unique_id.data(), sizeof id.internal);
    nccl::Config cfg{sizeof(nccl::Config), 0xcafebeefu, 21800u, 0, nccl::kUndefInt, nccl::kUndefInt, nccl::kUndefInt, nullptr, nccl::kUndefInt};
    const int nranks = static_cast<int>(job_.nranks);
    n_.group_start();
    for (unsigned i = 0; i < ranks_.size(); ++i) {
        ranks_[i].ctx.make_current();
        const int rank = static_cast<int>(job_.first_rank + i);
        nccl::Comm* c = ranks_[i].comm.out();
        const nccl::Result rr = n_.init_rank_config ? n_.init_rank_config(c, nranks, id, rank, &cfg) : n_.init_rank(c, nranks, id, rank);
        if (rr != nccl::kSuccess && rr != nccl::kInProgress) {
            n_.group_end();
            // The other ranks' inits may be under way: destroy could block on them.
            return abort("ncclCommInitRank failed: " + n_.err(rr));
        }
    }
    if (auto rr = n_.group_end(); rr != nccl::kSuccess && rr != nccl::kInProgress) return abort("ncclCommInitRank failed: " + n_.err(rr));
    return settle("communicator init");
}

// One all-reduce on every rank, in one group.
bool AllReduce::launch() {
    n_.group_start();
    for (auto& d : ranks_) {
        d.ctx.make_current();
        auto* buf = reinterpret_cast<void*>(d.buf.get());
        auto rr = n_.all_reduce(buf, buf, count_, nccl::kFloat32, nccl::kSum, d.comm.get(), d.s.get());
        if (rr != nccl::kSuccess && rr != nccl::kInProgress) {
            n_.group_end();
            return abort("ncclAllReduce failed: " + n_.err(rr));
        }
    }
    if (auto rr = n_.group_end(); rr != nccl::kSuccess && rr != nccl::kInProgress) return abort("ncclAllReduce failed: " + n_.err(rr));
    return settle("all-reduce");
}

// Waits for every communicator to leave ncclInProgress, or aborts them all.
bool AllReduce::settle(const char* what) {
    for (;;) {
        bool pending = false;
        for (auto& d : ranks_) {
            if (!d.comm.get()) continue;
            nccl::Result st = nccl::kSuccess;
            n_.async_error(d.comm.get(), &st);
            if (st == nccl::kInProgress) pending = true;
            else if (st != nccl::kSuccess) return abort(std::string(what) + " failed: " + n_.err(st));
        }
        if (!pending) return true;
        if (Clock::now() > deadline_) return past_deadline(what);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

// Waits for the streams while watching the communicators.
bool AllReduce::wait_streams(const char* what) {
    for (;;) {
        bool busy = false;
        for (auto& d : ranks_) {
            d.ctx.make_current();
            const auto q = a_.stream_query(d.s.get());
            if (q == cu::kNotReady) busy = true;
            else if (q != cu::kSuccess) return abort(std::string(what) + ": " + a_.err(q));
        }
        if (!busy) return true;
        if (!settle(what)) return false;
        if (Clock::now() > deadline_) return past_deadline(what);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// The warm-up, whose result check_data then reads.
bool AllReduce::warm_up() { return launch() && wait_streams("all-reduce"); }

// 17 windows of up to 64 Ki floats spread over the whole buffer (its start,
// every sixteenth, its end): a corrupting link or GPU shows wherever it hits.
// Every element is nranks.
void AllReduce::check_data() {
    std::vector<float> back(std::min<std::size_t>(count_, 1 << 16));
    for (auto& d : ranks_) {
        d.ctx.make_current();
        for (std::size_t k = 0; k <= 16 && res_.data_ok; ++k) {
            const std::size_t off = (count_ - back.size()) / 16 * k;
            if (a_.copy_dtoh(back.data(), d.buf.get() + off * 4, back.size() * 4) != cu::kSuccess) res_.data_ok = false;
            for (float v : back)
                if (v != static_cast<float>(job_.nranks)) res_.data_ok = false;
        }
    }
}

// `iterations` back to back between events on every stream; res.seconds is
// the slowest rank's time per all-reduce.
void AllReduce::timed_loop() {
    for (auto& d : ranks_) {
        d.ctx.make_current();
        a_.memset_d32(d.buf.get(), 0x3f800000u, count_);
        a_.event_record(d.e0.get(), d.s.get());
    }
    for (int it = 0; it < job_.iterations; ++it)
        if (!launch()) return;
    for (auto& d : ranks_) {
        d.ctx.make_current();
        a_.event_record(d.e1.get(), d.s.get());
    }
    if (!wait_streams("all-reduce")) return;
    double worst_ms = 0;
    for (auto& d : ranks_) {
        d.ctx.make_current();
        float ms = 0;
        if (a_.event_elapsed(&ms, d.e0.get(), d.e1.get()) == cu::kSuccess) worst_ms = std::max(worst_ms, double(ms));
    }
    res_.seconds = worst_ms / 1e3 / std::max(1, job_.iterations);
}

}  // namespace

gpu::NcclResult nccl_allreduce(const NcclJob& job) {
    gpu::NcclResult res;
    res.scope = job.scope;
    res.nranks = job.nranks;
    res.bytes = job.bytes;
    std::string err;
    const cu::Api* a = cu::api(err);
    const nccl::Api* n = a ? nccl::load(job.lib_path, err) : nullptr;
    if (!a || !n) {
        res.error = err;
        return res;
    }
    if (job.unique_id.size() != sizeof(nccl::UniqueId) || job.devices == 0 || job.first_rank + job.devices > job.nranks) {
        res.error = "bad NCCL job (unique id of " + std::to_string(job.unique_id.size()) + " bytes, ranks " +
                    std::to_string(job.first_rank) + "+" + std::to_string(job.devices) + " of " + std::to_string(job.nranks) + ")";
        return res;
    }
    // Ring: Tree and NVLS would inflate busbw past the links' speed (nccl-tests#196, #212).
    ::setenv("NCCL_ALGO", "Ring", 1);
    AllReduce(*a, *n, job, res).run();  // its GPUs' objects and communicators are gone when it returns
    return res;
}

}  // namespace gangway::sys
