// The fleet ingest's parser: any file a user drops into the fleet spool
// (lib/fleet/report_schema). Whatever it accepts, its rows are made, and the
// report it read renders and reads back the same.
#include "lib/fleet/report_schema.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <nlohmann/json.hpp>

#include <cstring>

namespace {

bool same_rows(const gangway::fleet::CheckRecord& a, const gangway::fleet::CheckRecord& b) {
    if (a.check.id != b.check.id || a.check.source != b.check.source || a.check.uid != b.check.uid ||
        a.check.time != b.check.time || a.check.job_id != b.check.job_id || a.check.verdict != b.check.verdict ||
        a.check.nodes != b.check.nodes || a.figures.size() != b.figures.size() || a.findings.size() != b.findings.size())
        return false;
    for (std::size_t i = 0; i < a.figures.size(); ++i) {
        const auto &x = a.figures[i], &y = b.figures[i];
        // Values compared as bits: a NaN is the same NaN both ways.
        if (x.check_id != y.check_id || x.time != y.time || x.node != y.node || x.device != y.device || x.peer != y.peer ||
            x.peer_class != y.peer_class || x.metric != y.metric || std::memcmp(&x.value, &y.value, sizeof x.value) != 0)
            return false;
    }
    for (std::size_t i = 0; i < a.findings.size(); ++i)
        if (a.findings[i].node != b.findings[i].node || a.findings[i].text != b.findings[i].text) return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace gangway;
    // The heap budget (SECURITY.md): parse_report: 64 n + 1 MiB, the input's copy included.
    const fuzz::HeapBudget budget(size, 64, 1u << 20);
    const std::string in(fuzz::text(data, size));
    // parse_report's one pass and the whole tree (parse_report_tree) give the
    // same rows or the same refusal, whatever the input (issue 34).
    {
        fleet::CheckRecord a, b;
        std::string ea, eb;
        try {
            a = fleet::parse_report(in, 1000);
        } catch (const Error& e) {
            ea = e.what();
        }
        try {
            b = fleet::parse_report_tree(in, 1000);
        } catch (const Error& e) {
            eb = e.what();
        }
        if (ea != eb || (ea.empty() && !same_rows(a, b))) __builtin_trap();
    }
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
