#include "catch_compat.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "../../lib/base/error.hpp"
#include "../../lib/base/text.hpp"
#include "../../lib/sys/node/process_env.hpp"

using namespace gangway;
using V = std::vector<std::string>;

TEST_CASE("split_keep_empty: n separators give n + 1 fields") {
    CHECK(split_keep_empty("a,b,c", ',') == V{"a", "b", "c"});
    CHECK(split_keep_empty("a,,b", ',') == V{"a", "", "b"});
    CHECK(split_keep_empty(",a,", ',') == V{"", "a", ""});
    CHECK(split_keep_empty("", ',') == V{""});
    CHECK(split_keep_empty(",", ',') == V{"", ""});
    CHECK(split_keep_empty("abc", ',') == V{"abc"});
    CHECK(split_keep_empty("a b", ' ') == V{"a", "b"});
}

TEST_CASE("split_nonempty: empty fields are dropped") {
    CHECK(split_nonempty("a,b,c", ',') == V{"a", "b", "c"});
    CHECK(split_nonempty("a,,b,", ',') == V{"a", "b"});
    CHECK(split_nonempty(",,", ',') == V{});
    CHECK(split_nonempty("", ',') == V{});
    CHECK(split_nonempty("  package  0 ", ' ') == V{"package", "0"});
    CHECK(split_nonempty("/opt/lib::/usr/lib", ':') == V{"/opt/lib", "/usr/lib"});
}

TEST_CASE("concat: the parts one after the other, empty ones included") {
    CHECK(concat({}) == "");
    CHECK(concat({"/sys/fs/cgroup", "", "/memory", "/slurm/job_7", "/memory.events"}) ==
          "/sys/fs/cgroup/memory/slurm/job_7/memory.events");
    const std::string big(1000, 'x');
    CHECK(concat({big, "/", big}) == big + "/" + big);
}

TEST_CASE("join: a separator between every two parts") {
    CHECK(join(V{}, ",").empty());
    CHECK(join(V{"a"}, ",") == "a");
    CHECK(join(V{"a", "b", "c"}, ", ") == "a, b, c");
    // Empty parts keep their place, so that split_keep_empty undoes join.
    CHECK(join(V{"", "a", ""}, ",") == ",a,");
    CHECK(split_keep_empty(join(V{"", "a", ""}, ","), ',') == V{"", "a", ""});
    const std::vector<unsigned> cpus = {0, 1, 7};
    CHECK(join(cpus, ",", [](unsigned c) { return std::to_string(c); }) == "0,1,7");
    CHECK(join(std::vector<int>{}, ",", [](int c) { return std::to_string(c); }).empty());
}

TEST_CASE("trim_right") {
    CHECK(trim_right("0-3\n") == "0-3");
    CHECK(trim_right("a \t\r\n") == "a");
    CHECK(trim_right("  a  ") == "  a");
    CHECK(trim_right(" \n").empty());
    CHECK(trim_right("").empty());
    CHECK(trim_right("0-3\t\n ", "\n ") == "0-3\t");
}

TEST_CASE("excerpt: outside input quoted on one short line") {
    using gangway::excerpt;
    CHECK(excerpt("node[1-3") == "node[1-3");
    CHECK(excerpt("a\nb\tc\x7f") == "a?b?c?");
    CHECK(excerpt(std::string(100, 'x'), 10) == "xxxxxxxxxx... (100 characters)");
    CHECK(excerpt("") == "");
}

TEST_CASE("parse_uint: the whole string, in range, no exceptions") {
    CHECK(parse_uint("0") == 0u);
    CHECK(parse_uint("4096") == 4096u);
    CHECK(parse_uint("007") == 7u);
    CHECK(parse_uint("4294967295") == 4294967295u);
    CHECK_FALSE(parse_uint("4294967296"));  // out of unsigned's range: not wrapped
    CHECK_FALSE(parse_uint(""));
    CHECK_FALSE(parse_uint("12abc"));  // std::stoul would say 12
    CHECK_FALSE(parse_uint(" 12"));
    CHECK_FALSE(parse_uint("12 "));
    CHECK_FALSE(parse_uint("+12"));
    CHECK_FALSE(parse_uint("-1"));     // std::stoul would say 18446744073709551615
    CHECK_FALSE(parse_uint("1.5"));
    CHECK(parse_uint<std::uint16_t>("65535") == 65535);
    CHECK_FALSE(parse_uint<std::uint16_t>("65536"));
    CHECK(parse_uint<std::uint64_t>("18446744073709551615") == std::numeric_limits<std::uint64_t>::max());
    CHECK_FALSE(parse_uint<std::uint64_t>("18446744073709551616"));
    CHECK(parse_uint("10de", 16) == 0x10deu);
    CHECK(parse_uint("10DE", 16) == 0x10deu);
    CHECK_FALSE(parse_uint("0x10de", 16));  // the caller strips the prefix
}

TEST_CASE("parse_int: signed, the same rules") {
    CHECK(parse_int("-1") == -1);
    CHECK(parse_int("42") == 42);
    CHECK(parse_int<long>("-100000") == -100000L);
    CHECK_FALSE(parse_int("2147483648"));
    CHECK(parse_int<long>("2147483648") == 2147483648L);
    CHECK_FALSE(parse_int("-"));
    CHECK_FALSE(parse_int("4: ACTIVE"));
    CHECK_FALSE(parse_int(""));
}

TEST_CASE("parse_double: what printf and std::to_string write") {
    CHECK(parse_double("400") == 400.0);
    CHECK(parse_double("2.5") == 2.5);
    CHECK(parse_double("-0.25") == -0.25);
    CHECK(parse_double("1e9") == 1e9);
    CHECK(parse_double("12.345678") == 12.345678);  // std::to_string's %f
    CHECK(parse_double(".5") == 0.5);
    CHECK(std::isinf(*parse_double("inf")));
    CHECK(std::isnan(*parse_double("nan")));
    CHECK_FALSE(parse_double(""));
    CHECK_FALSE(parse_double("400 Gb/sec (4X NDR)"));  // std::stod would say 400
    CHECK_FALSE(parse_double(" 1"));
    CHECK_FALSE(parse_double("+1"));
    CHECK_FALSE(parse_double("1e999"));  // out of range
}

TEST_CASE("hex: to_hex and from_hex undo each other") {
    CHECK(to_hex("").empty());
    CHECK(to_hex(std::string("\x00\xff\x10", 3)) == "00ff10");
    CHECK(from_hex("00ff10") == std::string("\x00\xff\x10", 3));
    CHECK(from_hex("ABcd") == "\xab\xcd");
    CHECK(from_hex("").empty());
    const std::string all = [] {
        std::string s;
        for (int c = 0; c < 256; ++c) s += static_cast<char>(c);
        return s;
    }();
    CHECK(from_hex(to_hex(all)) == all);
    CHECK_THROWS_WITH(from_hex("abc"), "hex string has an odd number of digits");
    CHECK_THROWS_WITH(from_hex("0g"), "not a hex string (character \"g\")");
    CHECK_THROWS_AS(from_hex("zz"), Error);
}

TEST_CASE("env_or: unset and empty variables give the fallback") {
    ::unsetenv("GANGWAY_TEXT_TEST");
    CHECK(sys::env_or("GANGWAY_TEXT_TEST", "/") == "/");
    CHECK(sys::env_or("GANGWAY_TEXT_TEST").empty());
    ::setenv("GANGWAY_TEXT_TEST", "", 1);
    CHECK(sys::env_or("GANGWAY_TEXT_TEST", "/") == "/");
    ::setenv("GANGWAY_TEXT_TEST", "/tmp/root", 1);
    CHECK(sys::env_or("GANGWAY_TEXT_TEST", "/") == "/tmp/root");
    ::unsetenv("GANGWAY_TEXT_TEST");
}

TEST_CASE("quiet_text: a drain reason SLURM, a shell and a one-line file take as it is") {
    CHECK(quiet_text("slow 0.4 Gb/s", 120) == "slow 0.4 Gb/s");
    CHECK(quiet_text("a\nb\x1b[2Jc\"d'e`f$g\\h", 120) == "a b [2Jc d e f g h");
    CHECK(quiet_text(std::string(300, 'x'), 120).size() == 120);
    CHECK(quiet_text("", 5).empty());
}
