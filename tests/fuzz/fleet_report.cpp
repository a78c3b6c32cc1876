// The fleet ingest's parser: any file a user drops into the fleet spool
// (lib/fleet/report_schema). Whatever it accepts, its rows are made, and the
// report it read renders and reads back the same.
#include "lib/fleet/report_schema.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace gangway;
    // The heap budget (SECURITY.md): parse_report: 64 n + 1 MiB, the input's copy included.
    const fuzz::HeapBudget budget(size, 64, 1u << 20);
    const std::string in(fuzz::text(data, size));
    fuzz::refusable([&] { (void)fleet::parse_report(in, 1000); });
    fuzz::refusable([&] {
        const auto j = fleet::parse_report_json(in);
        if (fleet::report_kind(j) == fleet::ReportKind::job_check) {
            const auto r = fleet::job_check_from_json(j);
            (void)fleet::job_check_from_json(fleet::parse_report_json(fleet::render_job_check(r)));
        } else {
            const auto r = fleet::node_check_from_json(j);
            (void)fleet::node_check_from_json(fleet::parse_report_json(fleet::render_node_check(r)));
        }
    });
    return 0;
}
