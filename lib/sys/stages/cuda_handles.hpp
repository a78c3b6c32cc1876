// Owners of the CUDA driver objects the stages make (cuda_api.hpp): each frees
// its object when it goes out of scope, so that every early return of a stage
// releases what it made. The driver frees an object in the context current at
// that moment: code that holds objects of several GPUs makes each GPU's
// context current before that GPU's objects go (PrimaryContext::make_current).
// Internal to lib/sys/stages.
#pragma once
#include "cuda_api.hpp"

namespace gangway::sys::cu {

// One object and the Api call that frees it. out() is for the call that
// makes it: `a.mem_alloc(buf.out(), bytes)`.
template <class T, Result (*Api::*Free)(T)>
class Unique {
public:
    explicit Unique(const Api& a) : a_(&a) {}
    Unique(const Unique&) = delete;
    Unique& operator=(const Unique&) = delete;
    ~Unique() { reset(); }

    T get() const { return h_; }
    T* out() {
        reset();
        return &h_;
    }
    void reset() {
        if (h_) (a_->*Free)(h_);
        h_ = T{};
    }

private:
    const Api* a_;
    T h_{};
};

using UniqueDeviceMem = Unique<Ptr, &Api::mem_free>;
using UniqueHostMem = Unique<void*, &Api::host_free>;  // pinned
using UniqueStream = Unique<Stream, &Api::stream_destroy>;
using UniqueEvent = Unique<Event, &Api::event_destroy>;
using UniqueModule = Unique<Module, &Api::module_unload>;

// A device's primary context, retained until this goes.
class PrimaryContext {
public:
    explicit PrimaryContext(const Api& a) : a_(&a) {}
    PrimaryContext(const PrimaryContext&) = delete;
    PrimaryContext& operator=(const PrimaryContext&) = delete;
    ~PrimaryContext() {
        if (retained_) a_->primary_release(dev_);
    }

    Result retain(Device dev) {
        dev_ = dev;
        const Result r = a_->primary_retain(&ctx_, dev);
        retained_ = r == kSuccess;
        return r;
    }
    Context get() const { return ctx_; }
    // Makes it the calling thread's current context; nothing when not retained.
    Result make_current() const { return retained_ ? a_->ctx_set_current(ctx_) : static_cast<Result>(kSuccess); }

private:
    const Api* a_;
    Device dev_{};
    Context ctx_{};
    bool retained_ = false;
};

}  // namespace gangway::sys::cu
