// Catch2's main. GCC 12 with the sanitizers' flags warns -Wmaybe-uninitialized
// inside <regex>, which Catch2 uses: a false positive in the standard library
// that filled CI's log, so it is silenced here and only here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
