// std::terminate's default handler in the plugin's own copy of libstdc++
// (linked in statically: configure's PLUGIN_CXXRT). libstdc++'s handler,
// __gnu_cxx::__verbose_terminate_handler, demangles the exception's type
// name, and so links libstdc++'s whole demangler: 47 KB of the 676 KiB the
// plugin took stripped (BENCHMARKS.md, "The plugin's size"). The handler
// libstdc++ starts with is the variable __cxxabiv1::__terminate_handler,
// which its archive member eh_term_handler.o defines; defined here, the
// linker takes this one and never pulls that member, the verbose handler or
// the demangler.
//
// The handler says what libstdc++'s says, in the same words (tests/
// plugin_faults.sh looks for "terminate called"), with the type's name as
// the compiler writes it ("St9bad_alloc", not "std::bad_alloc"), then aborts
// as it does. It runs only on a bug: no exception leaves a callback
// (guard.hpp). std::set_terminate still replaces it. Where the plugin links
// the shared libstdc++ instead, this variable is the plugin's own (the
// version script keeps it local) and changes nothing.
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <exception>
#include <typeinfo>

namespace {

[[noreturn]] void say_and_abort() noexcept {
    static bool terminating = false;  // a second terminate, from inside this handler
    if (terminating) {
        std::fputs("terminate called recursively\n", stderr);
        std::abort();
    }
    terminating = true;
    if (const std::type_info* type = abi::__cxa_current_exception_type()) {
        std::fprintf(stderr, "terminate called after throwing an instance of '%s'\n", type->name());
        try {
            throw;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "  what():  %s\n", e.what());
        } catch (...) {
        }
    } else {
        std::fputs("terminate called without an active exception\n", stderr);
    }
    std::abort();
}

}  // namespace

namespace __cxxabiv1 {
// NOLINTNEXTLINE: the name libstdc++'s eh_terminate.o refers to (its unwind-cxx.h declares it).
std::terminate_handler __terminate_handler = say_and_abort;
}  // namespace __cxxabiv1
