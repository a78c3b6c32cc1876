// Catch2's main. GCC 12 with the sanitizers' flags warns -Wmaybe-uninitialized
// inside <regex>, which Catch2 v2 uses: a false positive in the standard library
// that filled CI's log, so it is silenced here and only here.
#if GANGWAY_CATCH2 >= 3
#include <catch2/catch_session.hpp>
int main(int argc, char** argv) { return Catch::Session().run(argc, argv); }
#else
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
