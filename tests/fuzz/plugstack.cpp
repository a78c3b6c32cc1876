// plugstack.conf as gangway doctor reads it, each gangway line's arguments
// as the plugin judges them, and slurm.conf's PlugStackConfig.
#include "lib/env/config.hpp"
#include "lib/env/plugstack_text.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto in = gangway::fuzz::text(data, size);
    gangway::fuzz::refusable([&] {
        for (const auto& line : gangway::plugstack_lines(in, "plugstack.conf"))
            gangway::fuzz::refusable([&] { (void)gangway::parse_site_args(line.args); });
    });
    gangway::fuzz::refusable([&] { (void)gangway::plugstack_config(in); });
    return 0;
}
