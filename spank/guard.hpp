// The wall between the plugin and SLURM: every function SLURM calls runs its
// body through guarded(), so that no C++ exception crosses into slurmstepd or
// srun (it would std::terminate them) and an internal error still stops the
// task with one line (issue 15, item 11).
#pragma once
#include <cstdio>
#include <exception>

#include "log.hpp"
#include "state.hpp"

namespace gangway::plugin {

// The plugin's thread-local data (libstdc++'s exception state, linked in) is
// allocated by glibc on its first use in each thread, and if that allocation
// fails glibc aborts the whole process ("cannot allocate memory for
// thread-local data"), slurmstepd included. Its first use would be the throw
// of std::bad_alloc itself, so it is made at each callback's entry, before the
// callback allocates anything: slurm_spank_init runs first, on the thread
// that later runs user_init, while memory is still to spare.
// (uncaught_exceptions reads that state; it is declared pure, so the result is
// kept in a volatile, or the call would be dropped.)
inline void touch_thread_local_data() noexcept {
    [[maybe_unused]] volatile int in_flight = std::uncaught_exceptions();
}

// An exception other than gangway's Error, logged now and kept so that
// task_init fails with it: a task must not start without its variables and
// without the reason. Often std::bad_alloc, so nothing here allocates: an
// exception thrown from a handler would leave the noexcept guard and
// std::terminate would take the SLURM process down.
inline void note_internal_error(const char* where, const char* what) noexcept {
    char line[sizeof State::error];
    std::snprintf(line, sizeof line, "internal error in %s: %s; please report it with your plugstack.conf line", where,
                  what);
    log_error(line);
    note_error(line);
}

// body() with every exception caught; `failed` is returned when one was.
template <class F>
int guarded(const char* where, int failed, F&& body) noexcept {
    touch_thread_local_data();
    try {
        return body();
    } catch (const std::exception& e) {
        note_internal_error(where, e.what());
    } catch (...) {
        note_internal_error(where, "an exception of unknown type");
    }
    return failed;
}

}  // namespace gangway::plugin
