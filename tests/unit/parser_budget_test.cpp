// Every parser of outside input within its budget (SECURITY.md, "What a
// parser may spend"): the worst inputs we could construct, of 64 KiB (a
// variable or option; 1 MiB for a wire frame and a topology cache), hold the
// heap bound exactly (tests/unit/cost_meter counts every byte asked of
// operator new) and take under a second of CPU, which is hundreds of times
// what they take. The node lists, counts, ports and cpu lists have their
// own cases beside their other tests (hostlist_test.cpp and so on).
#include "catch_compat.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "../../lib/base/error.hpp"
#include "../../lib/base/text.hpp"
#include "../../lib/env/check_policy.hpp"
#include "../../lib/env/config.hpp"
#include "../../lib/env/netaddr.hpp"
#include "../../lib/conf/plugstack_text.hpp"
#include "../../lib/env/port.hpp"
#include "../../lib/env/switch_topology.hpp"
#include "../../lib/fleet/report_schema.hpp"
#include "../../lib/health/gres.hpp"
#include "../../lib/health/site_conf.hpp"
#include "../../lib/health/slurm_action.hpp"
#include "../../lib/health/state.hpp"
#include "../../lib/health/kmsg_record.hpp"
#include "../../lib/postmortem/kernel_signs.hpp"
#include "../../lib/postmortem/rank_dump.hpp"
#include "../../lib/health/xid.hpp"
#include "../../lib/pin/topology.hpp"
#include "../../lib/preflight/bootstrap.hpp"
#include "../../lib/preflight/card.hpp"
#include "../../lib/preflight/gpu_checks.hpp"
#include "../../lib/preflight/rdma_checks.hpp"
#include "../../lib/preflight/report.hpp"
#include "../../lib/slurm/requeue.hpp"
#include "../../lib/preflight/stage_status.hpp"
#include "../../lib/preflight/version_text.hpp"
#include "../../lib/preflight/wire.hpp"
#include "cost_meter.hpp"

using namespace gangway;
using gangway::test::Cost;
using gangway::test::cost_of;

namespace {

constexpr std::size_t k64K = 64 * 1024;

std::string repeat(std::string_view s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

// `s` repeated to `size` bytes (the last copy cut).
std::string fill(std::string_view s, std::size_t size = k64K) {
    std::string out = repeat(s, size / s.size() + 1);
    out.resize(size);
    return out;
}

// The bound: `per_byte` bytes of heap for each byte of input, plus `fixed`.
void within(const Cost& c, std::size_t input, std::size_t per_byte, std::size_t fixed, const std::string& what) {
    INFO(what << ": " << c.peak_bytes << " bytes of heap for " << input << " of input, " << c.cpu_seconds
              << " s of CPU" << (c.refused ? ", refused: " + c.error.substr(0, 120) : std::string()));
    CHECK(c.peak_bytes <= per_byte * input + fixed);
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    // A refusal is one line, and short whatever the input.
    CHECK(c.error.find('\n') == std::string::npos);
    CHECK(c.error.size() < 1024);
}

}  // namespace

TEST_CASE("option and variable values: linear, a refusal quotes at most an excerpt", "[budget]") {
    const std::vector<std::string> inputs = {fill("a"), fill("%h"), fill("1."), fill(":"), fill("\x01"),
                                             fill("auto"), fill("0123456789abcdef")};
    for (const auto& in : inputs) {
        const std::string_view v = in;
        // Two copies of the input at most (a value copied once, as inet_pton needs a C string), and a message.
        within(cost_of([&] { (void)parse_mode(v, "--gangway-mode"); }), v.size(), 2, 4096, "parse_mode");
        within(cost_of([&] { (void)parse_pin(v, "--gangway-pin"); }), v.size(), 2, 4096, "parse_pin");
        within(cost_of([&] { (void)parse_check_level(v, "--gangway-check"); }), v.size(), 2, 4096, "parse_check_level");
        within(cost_of([&] { (void)parse_on_fail(v, "--gangway-on-fail"); }), v.size(), 2, 4096, "parse_on_fail");
        within(cost_of([&] { check_iface_name(v, "--gangway-iface"); }), v.size(), 2, 4096, "check_iface_name");
        within(cost_of([&] { (void)parse_ip(v); }), v.size(), 2, 4096, "parse_ip");
        within(cost_of([&] { (void)preflight::parse_bootstrap_mode(v); }), v.size(), 2, 4096, "parse_bootstrap_mode");
        within(cost_of([&] { (void)preflight::parse_stage_status(v); }), v.size(), 2, 4096, "parse_stage_status");
        within(cost_of([&] { (void)preflight::parse_verdict(v); }), v.size(), 2, 4096, "parse_verdict");
        within(cost_of([&] { (void)preflight::key_from_secret(v); }), v.size(), 2, 4096, "key_from_secret");
        within(cost_of([&] { (void)first_reserved_port(v); }), v.size(), 2, 4096, "first_reserved_port");
        within(cost_of([&] { (void)is_reserved_port(v, 12001); }), v.size(), 2, 4096, "is_reserved_port");
        // A node name of 64 KB under a template of 64 KB of %h was 2^31 bytes: now a host name's bound.
        within(cost_of([&] { (void)expand_addr_template(v, v); }), v.size(), 2, 4096, "expand_addr_template");
    }
    const auto c = cost_of([&] { (void)expand_addr_template(fill("%h"), fill("n")); });
    CHECK(c.refused);
    CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("longer than a host name can be (255 characters)"));
    CHECK(expand_addr_template("%h-ib", "gpu01") == "gpu01-ib");
}

TEST_CASE("GPU thresholds and counts from the environment: linear", "[budget]") {
    for (const std::string& in : {fill("cuda,"), fill(","), fill("1e9"), fill("0,")}) {
        const EnvMap env{{"GANGWAY_REQUIRE", in},       {"GANGWAY_H2D_GBPS", in}, {"GANGWAY_NCCL_BYTES", in},
                         {"CUDA_VISIBLE_DEVICES", in}, {"SLURM_STEP_GPUS", in},  {"SLURM_GPUS_ON_NODE", in}};
        // The environment itself (6 copies) is not counted: it is made before.
        // GANGWAY_REQUIRE and CUDA_VISIBLE_DEVICES are split into their items, a std::string
        // each (32 bytes for 2 bytes of "0,"): 16 bytes a byte, twice while the vector grows.
        within(cost_of([&] { (void)gpu::thresholds_from_env(env); }), in.size(), 32, 4096, "thresholds_from_env");
        within(cost_of([&] { (void)gpu::allocated_gpus(env); }), in.size(), 32, 4096, "allocated_gpus");
    }
}

TEST_CASE("requeue exclusions: the node list's bound, and no product of the two lists", "[budget]") {
    // 65,536 excluded nodes and 65,536 bad ones, none in common: 2^32 comparisons before.
    const std::string show = "x[00000-65535]";  // the job's ExcNodeList
    std::vector<std::string> bad;
    for (unsigned i = 0; i < 65536; ++i) bad.push_back("y" + std::to_string(i));
    std::vector<std::string> got;
    const auto c = cost_of([&] { got = slurm::requeue_exclusions(show, bad); });
    CHECK(got.size() == 131072);
    // The names (65,536 of the list's, 65,536 copies of the bad) and a hash set of views.
    within(c, show.size(), 0, 131072 * (32 + 16) + 65536 * 64 + 4 * 65536 * 8, "requeue_exclusions");
    CHECK(slurm::requeue_exclusions("n[1-2]", {"n2", "n3", "n3"}) ==
          std::vector<std::string>{"n1", "n2", "n3"});
}

TEST_CASE("plugstack.conf and slurm.conf: linear, no copy per line", "[budget]") {
    const std::vector<std::string> inputs = {
        fill("\n"), fill("include a\n"), fill("required gangway.so mode=auto pin=on "), fill("# comment\n"),
        fill("required /x/gangway.so a=" + std::string(200, 'v') + "\n"), fill(" "), fill("PlugStackConfig=")};
    for (const auto& in : inputs) {
        // Lines that matter are kept (with their words, a std::string each: 32 bytes for 2 bytes
        // of "a "), others cost nothing: "include a\n" is the worst, some 165 bytes for 10 (the
        // line, its file's name and its path), half again while the vector grows.
        within(cost_of([&] { (void)plugstack_lines(in, "/etc/slurm/plugstack.conf"); }), in.size(), 32, 4096,
               "plugstack_lines");
        // One line at a time: its words, joined, and the key (a few copies of the longest line).
        within(cost_of([&] { (void)plugstack_config(in); }), in.size(), 8, 4096, "plugstack_config");
        // The plugin's arguments, each judged: one word of 64 KB, and 64 KB of short ones.
        const std::vector<std::string> one{in};
        within(cost_of([&] { (void)parse_site_args(one); }), in.size(), 2, 4096, "parse_site_args (one word)");
    }
    std::vector<std::string> words(k64K / 8, "pin=on");
    within(cost_of([&] { (void)parse_site_args(words); }), k64K, 1, 4096, "parse_site_args (8,192 words)");
    words.assign(k64K / 32, "nic_include=" + repeat("a,", 10) + "a");
    // nic_include's names are kept: the last one given, 11 strings.
    within(cost_of([&] { (void)parse_site_args(words); }), k64K, 1, 4096, "parse_site_args (nic lists)");
    const std::vector<std::string> names{"nic_include=" + fill("a,")};
    within(cost_of([&] { (void)parse_site_args(names); }), k64K, 48, 4096, "parse_site_args (32,768 names)");
}

TEST_CASE("version texts: linear", "[budget]") {
    namespace p = gangway::preflight;
    for (const std::string& in : {fill("1."), fill("9"), fill("Kernel Module "), fill("\"cuda\" : {\"version\" : \""),
                                  fill("libnccl.so.1"), fill("CUDA Version 1"), fill("1.2.")}) {
        within(cost_of([&] { (void)p::driver_version_from_proc(in); }), in.size(), 2, 4096, "driver_version_from_proc");
        within(cost_of([&] { (void)p::cuda_version_from_json(in); }), in.size(), 2, 4096, "cuda_version_from_json");
        within(cost_of([&] { (void)p::cuda_version_from_txt(in); }), in.size(), 2, 4096, "cuda_version_from_txt");
        within(cost_of([&] { (void)p::nccl_version_from_soname(in); }), in.size(), 2, 4096, "nccl_version_from_soname");
        // Number by number: nothing kept (each side's numbers were 8 bytes for 2 of "1.").
        within(cost_of([&] { (void)p::version_less(in, in); }), 2 * in.size(), 0, 4096, "version_less");
        within(cost_of([&] { (void)p::slurm_version_in(in); }), in.size(), 0, 4096, "slurm_version_in");
    }
}

TEST_CASE("sysfs attributes: linear", "[budget]") {
    // An attribute is read up to kMaxAttr (1 MiB, lib/sys/node/sysfs.hpp); strtod's worst, digits.
    for (const std::string& in : {fill("4: ACTIVE", 1 << 20), fill("9", 1 << 20), fill("1e", 1 << 20),
                                  fill("400 Gb/sec (4X NDR ", 1 << 20), fill("NVIDIA H100 ", 1 << 20)}) {
        within(cost_of([&] { (void)verbs::parse_state(in); }), in.size(), 3, 4096, "parse_state");
        within(cost_of([&] { (void)verbs::parse_rate(in); }), in.size(), 3, 4096, "parse_rate");
        within(cost_of([&] { (void)gpu::pcie_gen_from_speed(in); }), in.size(), 2, 4096, "pcie_gen_from_speed");
        within(cost_of([&] { (void)gpu::gpu_model(in); }), in.size(), 2, 4096, "gpu_model");
    }
}

TEST_CASE("the topology cache: the entries' bound, and the PUs a machine can have", "[budget]") {
    const std::string head = "gangway-topology 1\n";
    // 15 bytes that named a core of 2^20 PUs, rebuilt into a table of 80 MB.
    auto c = cost_of([&] { (void)parse_topology(head + "core 0-1048575\nend\n", "t.cache"); });
    CHECK(c.refused);
    CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("PU 1048575 is past 65535"));
    within(c, 40, 0, 4 * kMaxCpuListEntries + 65536, "parse_topology (a core of 2^20 PUs)");
    // The most PUs a cache may have, a core each, and 2^20 entries over NUMA nodes and GPUs;
    // long ancestry lists; many short lines. Up to 1 MiB of file.
    std::string most = head;
    for (unsigned pu = 0; pu < 65536; ++pu) most += "core " + std::to_string(pu) + "\n";
    for (unsigned n = 0; n < 14; ++n) most += "numa " + std::to_string(n) + " 0 0-65535\n";
    most += "end\n";
    Topology t;
    c = cost_of([&] { t = parse_topology(most, "t.cache"); });
    CHECK_FALSE(c.refused);
    CHECK(t.pus.size() == 65536);
    // The entries (4 bytes each, 2^20 at most), a Core (24 bytes and its PUs) per core line,
    // a table node (64 bytes) and a Pu (16) per PU, and the lines' fields.
    within(c, most.size(), 48, 4 * kMaxCpuListEntries + 65536 * (64 + 16 + 28) + 4096, "parse_topology (65,536 PUs)");
    const std::string ancestry = head + "core 0\ngpu 0000:01:00.0 10de 2330 0 0 - 0 " + fill("a,", 1 << 20) + "\nend\n";
    within(cost_of([&] { (void)parse_topology(ancestry, "t.cache"); }), ancestry.size(), 48, 4096,
           "parse_topology (a long ancestry)");
    const std::string lines = head + fill("core 0\n", 1 << 20) + "end\n";
    within(cost_of([&] { (void)parse_topology(lines, "t.cache"); }), lines.size(), 48, 4096,
           "parse_topology (short lines)");
}

TEST_CASE("wire messages: a frame's key=value lines, and a node card", "[budget]") {
    namespace p = gangway::preflight;
    // A frame's payload is at most kMaxFrame (1 MiB). Shortest distinct lines, escapes, one long line.
    std::string distinct;
    for (unsigned k = 0; distinct.size() < p::kMaxFrame - 16; ++k) distinct += std::to_string(k) + "=\n";
    for (const std::string& in : {distinct, fill("%25", p::kMaxFrame - 1) + "=\n", "k=" + fill("v", p::kMaxFrame - 3) + "\n"}) {
        // A map node per line (about 100 bytes for 4 bytes of "123=\n"): 32 bytes a byte.
        within(cost_of([&] { (void)p::decode_kv(in); }), in.size(), 32, 4096, "decode_kv");
    }
    // A card of 4,096 NICs, the most it may list, each with a long address list.
    p::Kv kv{{"card.node_rank", "0"}, {"card.node", "n0"}, {"card.hostname", "n0"}, {"card.data_iface", "ib0"},
             {"card.data_addr", "198.18.0.1"}, {"card.data_port", "1"}, {"card.gpus", "99999999"}, {"card.nics", "4096"}};
    std::size_t size = 0;
    for (unsigned i = 0; i < 4096; ++i) {
        const std::string q = "card.nic." + std::to_string(i) + ".";
        kv[q + "name"] = "mlx5_" + std::to_string(i);
        kv[q + "kind"] = "ib";
        kv[q + "state"] = "up";
        kv[q + "rate_mbps"] = "400000";
        kv[q + "addrs"] = repeat("a,", 64);
    }
    for (const auto& [k, v] : kv) size += k.size() + v.size() + 2;
    within(cost_of([&] { (void)p::card_from_kv(kv); }), size, 48, 4096, "card_from_kv");
}

// The node check's readers (gangway node-check, as root between jobs): the
// site file, slurm.conf's and gres.conf's GPU lines (their node lists through
// expand_hostlist, at most 2^20 names a file in all), its own state file, the
// kernel log's records and scontrol's answer.
TEST_CASE("the node check's readers: linear, node lists within the hostlist's bound", "[budget]") {
    constexpr std::size_t kHostlist = (20u << 20) + 12 * k64K;  // one expand_hostlist at its worst
    const std::vector<std::pair<std::string, std::string>> sites = {
        {"one long value", "gpu_model=" + fill("H")},
        {"many lines", fill("gpus=8\n")},
        {"many unknown keys", fill("zz=1\n")},
        {"comments", fill("# x\n")},
    };
    // The site file is the admin's own: its message lists each bad line (at
    // most 20, then how many more), each quoting an excerpt.
    for (const auto& [what, in] : sites) {
        const Cost c = cost_of([&] { (void)health::parse_site_conf(in, "node-check.conf"); });
        INFO("site file, " << what << ": " << c.peak_bytes << " bytes of heap, " << c.cpu_seconds << " s of CPU");
        CHECK(c.peak_bytes <= 64 * in.size() + (64 << 10));
        CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
        CHECK(std::count(c.error.begin(), c.error.end(), '\n') <= 20);
        CHECK(c.error.size() < 21 * 512);
    }
    const std::vector<std::pair<std::string, std::string>> confs = {
        {"node lists of 65,536 names", fill("NodeName=n[1-65536] Gres=gpu:1\n")},
        {"long Gres values", "NodeName=node08 Gres=" + fill("gpu:1,")},
        {"many lines for the node", fill("NodeName=node08 Gres=gpu:h100:8(S:0-1)\n")},
        {"gres.conf File lists", fill("Name=gpu File=/dev/nvidia[0-65535]\n")},
    };
    for (const auto& [what, in] : confs) {
        within(cost_of([&] { (void)health::gres_from_slurm_conf(in, "node08"); }), in.size(), 64, kHostlist,
               "slurm.conf, " + what);
        within(cost_of([&] { (void)health::gres_from_gres_conf(in, "node08"); }), in.size(), 64, kHostlist,
               "gres.conf, " + what);
    }
    const std::vector<std::pair<std::string, std::string>> states = {
        {"counters", "gangway-node-check-state 1\n" + fill("counter mlx5_0/1 link_downed 3\n")},
        {"distinct counters", [] {
             std::string s = "gangway-node-check-state 1\n";
             for (int i = 0; s.size() < k64K; ++i) s += "counter p" + std::to_string(i) + " c 1\n";
             return s;
         }()},
        {"failures", "gangway-node-check-state 1\n" + fill("failed pcie-width gpu 0000:17:00.0\n")},
        {"a long drain reason", "gangway-node-check-state 1\ndrained " + fill("x")},
    };
    for (const auto& [what, in] : states)
        within(cost_of([&] { (void)health::parse_state(in); }), in.size(), 8, 64 << 10, "state file, " + what);
    const std::vector<std::pair<std::string, std::string>> kmsgs = {
        {"Xid records", fill("3,1004,13000000,-;NVRM: Xid (PCI:0000:1b:00): 79, pid=0, name=, GPU has fallen off the bus.\n")},
        {"short records", fill("3,1,1,-;x\n")},
        {"one long record", "3,1,1,-;NVRM: Xid (PCI:" + fill("0")},
        {"forged tags", fill("3,1,1,-;tmpfs: Unknown parameter 'NVRM: Xid (PCI:0000:1b:00): 79, x'\n6,2,1,-;NVRM: Xid (PCI:[1]: "
                             "segfault in x): 79[1+1]\n12,3,1,-;NVRM: Xid (PCI:0000:1b:00): 79, x\n")},
        {"Xids naming no GPU", fill("3,1004,1,-;NVRM: Xid (PCI:ffff:99:00): 79, x\n")},
        {"a gap at each record", [] {
             std::string s;
             for (int i = 0; s.size() < k64K; ++i) s += "3," + std::to_string(i * 1000) + ",1,-;x\n";
             return s;
         }()},
    };
    for (const auto& [what, in] : kmsgs) {
        within(cost_of([&] { (void)health::parse_kmsg_xids(in); }), in.size(), 16, 64 << 10, "kernel log, " + what);
        within(cost_of([&] { (void)health::last_kmsg_seq(in); }), in.size(), 16, 64 << 10, "kernel log's last record, " + what);
        within(cost_of([&] { (void)health::kmsg_lost(in, 0u); }), in.size(), 16, 64 << 10, "kernel log's lost records, " + what);
        within(cost_of([&] { (void)postmortem::kernel_signs(in, {}); }), in.size(), 16, 64 << 10, "the post-mortem's kernel signs, " + what);
    }
    // The post-mortem's kernel signs of OOM-killer, link and hung-task lines (the first 256 kept).
    for (const auto& in : {fill("3,1,1,-;Out of memory: Killed process 4242 (python3) total-vm:1kB\n"),
                           fill("3,1,1,-;oom-kill:constraint=CONSTRAINT_MEMCG,task=x,pid=1,pid=2,pid=3\n"),
                           fill("6,1,1,-;mlx5_core 0000:3b:00.0 ens1f0: Link down\n"),
                           fill("3,1,1,-;INFO: task python3:4343 blocked for more than 120 seconds.\n")})
        within(cost_of([&] { (void)postmortem::kernel_signs(in, {}); }), in.size(), 16, 64 << 10, "the post-mortem's kernel signs");
    // A rank's dump (the user's file): nesting, many values, long strings.
    for (const auto& in : {fill("["), fill("{\"a\":"), "{\"kind\":\"gangway-rank-dump\",\"rank\":1,\"entered\":[" + fill("1,") + "1]}",
                           "{\"kind\":\"gangway-rank-dump\",\"rank\":1,\"exception\":\"" + fill("x") + "\"}",
                           "{\"kind\":\"gangway-rank-dump\",\"rank\":1,\"x\":[" + fill("\"a\",") + "1]}",
                           "{\"kind\":\"gangway-rank-dump\",\"rank\":1,\"groups\":{\"0\":{\"timed\":[" + fill("[1,1,1,1],") + "[1]]}}}"})
        within(cost_of([&] { (void)postmortem::parse_rank_dump(in); }), in.size(), 16, 64 << 10, "a rank's dump");
    const std::vector<std::pair<std::string, std::string>> nodes = {
        {"a long reason", "NodeName=node11 State=IDLE+DRAIN Reason=" + fill("x")},
        {"many fields", fill("State=IDLE ")},
        {"many lines", fill("   Reason=a\n")},
    };
    for (const auto& [what, in] : nodes)
        within(cost_of([&] { (void)health::parse_show_node(in); }), in.size(), 2, 64 << 10, "scontrol show node, " + what);
}

TEST_CASE("SLURM's topology files: bounded in names, no recursion, one line on refusal", "[budget]") {
    const std::vector<std::string> inputs = {
        fill("SwitchName=a Switches=a\n"), fill("SwitchName=s Nodes=n[0-65535]\n"),
        fill("SwitchName=s Nodes=" + std::string(250, 'x') + "[0-65535]\n"), fill("BlockName=b Nodes=n[0-9999]\n"),
        fill("SwitchName=[\n"), fill("#\n"), fill("\n"), fill("SwitchName=s"),
        fill("- topology: t\n  tree:\n    switches:\n    - switch: s\n      nodes: n[0-65535]\n"),
        fill("- topology: t\n  block:\n    blocks:\n    - block: b\n      nodes: n[0-9]\n"), fill("- "),
        fill("'"), fill("- topology: t\n  block:\n    block_sizes:\n      - 4\n")};
    for (const auto& in : inputs)
        for (const auto f : {TopologyFormat::Conf, TopologyFormat::Yaml})
            within(cost_of([&] { (void)parse_switch_topology(in, f); }), in.size(), 14, (70u << 20),
                   "parse_switch_topology " + excerpt(in, 24));
}

// The fleet ingest's parse of a spooled file (issue 31, items 2, 7 and 9):
// nlohmann's callback parser looked through the parent array after each
// object (200,000 `{}` took a minute) and ordered_json found each key by a
// linear search (100,000 keys, half a minute); a valid report of 380,000
// links took 165 s, and each finding was compared with each node. These are
// a few MB each (more than the 64 KiB of the others: the spool takes 32 MiB):
// the old code took seconds to minutes on each, the SAX parse milliseconds.
namespace {
std::string job_head(std::size_t nodes) {
    std::string s = R"({"kind": "gangway-job-check", "schema": 2, "id": "j", "time": 1700000000, "verdict": "ok", )"
                    R"("exit_code": 0, "job_id": "1", "step_id": "0", "mode": "quick", "bootstrap": "tcp", "seconds": 1, )"
                    R"("deadline_s": 60, "expected_bps": 1e9, "slow_ratio": 0.5, "nodes": [)";
    for (std::size_t i = 0; i < nodes; ++i)
        s += (i ? ", " : "") + std::string(R"({"name": "n)") + std::to_string(i) +
             R"(", "addr": "a", "status": "ok", "tx_bps": 1e9, "rx_bps": 1e9, "nic_mbps": 10000, "reasons": []})";
    return s + "], ";
}
std::string job_tail() { return R"("stages": [], "gpus": [], "nccl": [], "ports": [], "notes": []})"; }
}  // namespace

TEST_CASE("fleet reports: a linear parse, objects of the schema's keys, findings by name, a short refusal",
          "[budget][fleet]") {
    const fleet::ReportLimits lim;
    auto parse = [&](const std::string& in) {
        return cost_of([&] { (void)fleet::parse_report(in, 1000, lim); });
    };
    // 200,000 empty objects in an array: refused for its nodes' count, after a
    // parse of milliseconds (each `{}` an ordered_json and its map: 64 bytes a byte is room).
    std::string in = R"({"kind": "gangway-job-check", "schema": 2, "nodes": [{})" + repeat(", {}", 199'999) + "]}";
    auto c = parse(in);
    within(c, in.size(), 64, 1 << 20, "200,000 {}");
    CHECK(c.refused);
    CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("200000 nodes, over the limit of 16384"));
    // An object of 100,000 keys: refused at the 23rd (kMaxReportKeys).
    in = R"({"kind": "gangway-job-check", "schema": 2)";
    for (int i = 0; i < 100'000; ++i) in += ", \"k" + std::to_string(i) + "\": 0";
    in += "}";
    c = parse(in);
    within(c, in.size(), 2, 1 << 20, "100,000 keys");
    CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("an object of more than 22 keys"));
    // A duplicate key among few: refused, whichever value would have won.
    c = parse(R"({"kind": "gangway-job-check", "kind": "gangway-node-check", "schema": 2})");
    CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("names the key \"kind\" twice"));
    // A valid report of 64 nodes and 150,000 links (their pairs are the figures): stored, linearly.
    in = job_head(64) + R"("links": [)";
    for (int i = 0; i < 150'000; ++i)
        in += (i ? ", " : "") + std::string(R"({"from": "n)") + std::to_string(i % 64) + R"(", "to": "n)" +
              std::to_string((i / 64 + i + 1) % 64) + R"(", "stage": "bandwidth", "ok": true, "bps": 1e9, "ms": null, "error": ""})";
    in += "], \"findings\": [], " + job_tail();
    c = parse(in);
    within(c, in.size(), 64, 1 << 20, "150,000 links");
    CHECK_FALSE(c.refused);
    // 32,768 nodes and 120,000 findings that each name one (caps an admin
    // may set): a lookup each, not 32,768 comparisons each (4 x 10^9, seconds).
    fleet::ReportLimits wide;
    wide.max_nodes = 32'768;
    wide.max_findings = 131'072;
    in = job_head(32'768) + R"("links": [], "findings": [)";
    for (int i = 0; i < 120'000; ++i) in += (i ? ", \"n" : "\"n") + std::to_string(i % 32'768) + ": slow\"";
    in += "], " + job_tail();
    fleet::CheckRecord rec;
    c = cost_of([&] { rec = fleet::parse_report(in, 1000, wide); });
    within(c, in.size(), 64, 1 << 20, "120,000 findings");
    REQUIRE_FALSE(c.refused);
    REQUIRE(rec.findings.size() == 120'000);
    CHECK(rec.findings[32'769].node == "n1");
    // A string that never ends, of 4 MiB: the refusal quotes 64 characters of
    // it (it quoted all of it, and kept it to the end of the ingest).
    in = R"({"kind": "gangway-job-check", "id": ")" + std::string(4u << 20, 'a');
    c = parse(in);
    within(c, in.size(), 16, 1 << 20, "an unterminated string");
    CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("the report is not valid JSON"));
    CHECK(c.error.size() < 400);
}

TEST_CASE("fleet reports: an object in an array holds room for its keys, not for the next power of two", "[budget][fleet]") {
    // A report's GPUs, ports and links are arrays of objects alike (a
    // 2,048-node report has 41,000 of them, issue 34): each takes its keys'
    // room once. Grown one key at a time, an object of 10 keys held room for
    // 16 (768 bytes of pairs where 480 are used) and was moved four times.
    const std::string obj = R"({"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0, "h": 0, "i": 0, "j": 0})";
    std::string in = R"({"kind": "gangway-job-check", "schema": 2, "gpus": [)";
    constexpr std::size_t kObjects = 20'000;
    for (std::size_t i = 0; i < kObjects; ++i) in += (i ? ", " : "") + obj;
    in += "]}";
    nlohmann::ordered_json tree;
    const auto c = cost_of([&] { tree = fleet::parse_report_json(in); });
    REQUIRE_FALSE(c.refused);
    REQUIRE(tree["gpus"].size() == kObjects);
    // Per object: its value in the array (16 bytes), its map (24) and 10
    // pairs of 48 bytes: 520. The bound leaves 80 bytes an object, and a MiB
    // for the array's own growth.
    INFO(c.peak_bytes << " bytes of heap for " << kObjects << " objects of 10 keys");
    CHECK(c.peak_bytes <= kObjects * 600 + (1u << 20));

    // The guess is the object before: full objects (22 keys, the most a
    // report's object may have) and empty ones by turns make every empty one
    // hold room for 22. That stays within the budget of 64 bytes a byte.
    std::string full = "{";
    for (char k = 'a'; k < 'a' + 22; ++k) full += std::string(k == 'a' ? "" : ", ") + '"' + k + "\": 0";
    full += "}";
    in = R"({"kind": "gangway-job-check", "schema": 2, "gpus": [)";
    for (std::size_t i = 0; i < 10'000; ++i) in += (i ? ", " : "") + full + ", {}";
    in += "]}";
    const auto t = cost_of([&] { (void)fleet::parse_report_json(in); });
    within(t, in.size(), 64, 1 << 20, "22 keys and none by turns");
    CHECK_FALSE(t.refused);
}
