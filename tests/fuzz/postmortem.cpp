// The post-mortem's parsers of what crosses a trust boundary (issue 33): a
// node's record as fleet serve takes it (after the signature, but from any
// node the key reaches), a task line, a rank's dump (the user's own file) and
// the kernel log's records. Whatever a record parser accepts writes back and
// reads back the same, and the verdict over it renders.
#include "lib/postmortem/kernel_signs.hpp"
#include "lib/postmortem/rank_dump.hpp"
#include "lib/postmortem/record.hpp"
#include "lib/stepd/task_samples.hpp"
#include "lib/postmortem/verdict.hpp"
#include "lib/watch/judge.hpp"
#include "lib/watch/pace_json.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace gangway::postmortem;
    // SECURITY.md: a node record takes at most about 2 n + 1 MiB of heap.
    const gangway::fuzz::HeapBudget budget(size, 4, 2u << 20);
    const std::string in(gangway::fuzz::text(data, size));
    gangway::fuzz::refusable([&] {
        const NodeRecord r = parse_node_record(in);
        const std::string out = to_json(r);
        if (to_json(parse_node_record(out)) != out) std::abort();  // what it writes, it reads back the same
        const Verdict v = judge({r}, {});
        if (render_line(v).size() > kMaxLine) std::abort();
        (void)render_timeline(v, {r});
    });
    gangway::fuzz::refusable([&] {
        const TaskEnd t = parse_task_end(in);
        const std::string line = format_task_end(t);
        if (format_task_end(parse_task_end(line)) != line) std::abort();
    });
    gangway::fuzz::refusable([&] {
        // slurmstepd's samples file: what it reads, written again line by line, reads back the same.
        const StepSamples s = parse_samples(in);
        char line[kMaxSampleLine];
        std::string out(line, format_sample_header(s.step, s.interval_ns, line));
        for (const auto& x : s.rows) out.append(line, format_sample_line(x, line));
        for (const auto& p : s.pressure) out.append(line, format_pressure_line(p, line));
        const StepSamples again = parse_samples(out);
        if (again.rows.size() != s.rows.size() || again.pressure.size() != s.pressure.size()) std::abort();
    });
    gangway::fuzz::refusable([&] { (void)parse_rank_dump(in); });
    gangway::fuzz::refusable([&] { (void)kernel_signs(in, KmsgWindow{}); });
    // The running job's (issue 43): a rank's pace report (the user's own
    // file) and a node's progress record (over the network, signed): what
    // they accept writes back and reads back the same, and is judged.
    gangway::fuzz::refusable([&] {
        const gangway::watch::Pace p = gangway::watch::parse_pace(in);
        const std::string out = gangway::watch::pace_json(p);
        if (gangway::watch::pace_json(gangway::watch::parse_pace(out)) != out) std::abort();
    });
    gangway::fuzz::refusable([&] {
        const gangway::watch::NodeProgress p = gangway::watch::parse_progress(in);
        const std::string out = gangway::watch::progress_json(p);
        if (gangway::watch::progress_json(gangway::watch::parse_progress(out)) != out) std::abort();
        (void)gangway::watch::judgement_line(gangway::watch::judge({p}, p.t_ns));
    });
    return 0;
}
