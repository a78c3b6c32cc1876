// `gangway postmortem`: who stopped a job (issue 33).
//
//   gangway postmortem --records FILE|DIR... [--lost NODE[,NODE...]]
//       judges offline from nodes' records (node.json, as each node's Epilog
//       writes them): a FILE is one record, a DIR every *.json directly in it.
//       Prints the line and the timeline (lib/postmortem/verdict).
//
//   gangway postmortem [JOBID] [--from URL | --db FILE]
//   gangway postmortem send FILE --to URL --key FILE
//   gangway postmortem resend [--dir DIR] [--to URL --key FILE]
//       the delivery's forms: cmd_postmortem_deliver.cpp.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/postmortem/record.hpp"
#include "../lib/postmortem/verdict.hpp"
#include "../lib/sys/node/file.hpp"
#include "commands.hpp"

namespace gangway::cli {

namespace {

namespace fs = std::filesystem;

const char* kHelp =
    "usage: gangway postmortem --records FILE|DIR... [--lost NODE[,NODE...]]\n"
    "\n"
    "Names the node, rank and cause that stopped a job first, apart from the cascade, from\n"
    "its nodes' records (node.json, one per node, as the Epilog writes them): a FILE is one\n"
    "record, a DIR every *.json file directly in it. --lost names nodes of the job that sent\n"
    "no record and that SLURM reports down. Prints the one line and the timeline; for a job\n"
    "whose every task ended normally, says so. Exit 0 when judged, 1 when a record cannot be\n"
    "read, 2 for a usage error.\n";

// More files than any job has nodes: a directory of more is not a job's records.
constexpr std::size_t kMaxRecordFiles = 65'536;

// The files a --records argument names; refuses a directory of too many.
Result<std::vector<std::string>> record_files(const std::string& arg) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) return std::vector<std::string>{arg};
    std::vector<std::string> out;
    for (fs::directory_iterator it(arg, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (n.size() < 6 || n.compare(n.size() - 5, 5, ".json") != 0 || n[0] == '.') continue;
        if (out.size() == kMaxRecordFiles)
            return Failure{arg + ": more than " + std::to_string(kMaxRecordFiles) + " .json files: not one job's records"};
        out.push_back(it->path().string());
    }
    if (ec) return Failure{arg + ": " + ec.message()};
    if (out.empty()) return Failure{arg + ": no .json record in it"};
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

// The verdict on stdout: the line and the timeline, or that the job stopped
// for no one. Shared with the JOBID form.
int print_verdict(const std::vector<postmortem::NodeRecord>& records, const std::vector<std::string>& lost) {
    const postmortem::Verdict v = postmortem::judge(records, lost);
    if (v.cause == postmortem::Cause::none) {
        std::printf("gangway: job %u: every task of its %zu node record(s) ended normally; nothing stopped it\n", v.job,
                    records.size());
        return 0;
    }
    const std::string t = postmortem::render_timeline(v, records);
    std::fwrite(t.data(), 1, t.size(), stdout);
    return 0;
}

int cmd_postmortem(int argc, char** argv) {
    // The delivery's forms (cmd_postmortem_deliver.cpp): `send`, and a JOBID
    // (any call without --records).
    if (argc > 1 && std::string_view(argv[1]) == "send") return cmd_postmortem_send(argc - 1, argv + 1);
    if (argc > 1 && std::string_view(argv[1]) == "resend") return cmd_postmortem_resend(argc - 1, argv + 1);
    // The Epilog's part (cmd_postmortem_collect.cpp).
    if (argc > 1 && std::string_view(argv[1]) == "collect") return cmd_postmortem_collect(argc - 1, argv + 1);
    // The Prolog's part (cmd_postmortem_collect.cpp): the ports at the job's start.
    if (argc > 1 && std::string_view(argv[1]) == "snapshot") return cmd_postmortem_snapshot(argc - 1, argv + 1);
    bool offline = false, help = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        offline |= a == "--records" || a.starts_with("--records=");
        help |= a == "--help" || a == "-h";
    }
    if (!offline) {
        if (help) std::fputs(kHelp, stdout), std::fputs("\n", stdout);
        return cmd_postmortem_job(argc, argv);
    }
    std::vector<std::string> args, lost;
    bool records = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kHelp, stdout);
            return 0;
        }
        if (auto l = option_value(argc, argv, i, "--lost")) {
            for (auto& n : split_nonempty(*l, ',')) lost.push_back(std::move(n));
            continue;
        }
        if (a == "--records") {
            records = true;
            continue;
        }
        if (a.rfind("--records=", 0) == 0) {
            records = true;
            args.push_back(a.substr(10));
            continue;
        }
        if (a.rfind("-", 0) == 0) {
            std::fprintf(stderr, "gangway postmortem: unknown option %s; see `gangway postmortem --help`\n",
                         excerpt(a).c_str());
            return 2;
        }
        args.push_back(a);
    }
    if (!records || args.empty()) {
        std::fprintf(stderr, "gangway postmortem: name the records: --records FILE|DIR...; see `gangway postmortem --help`\n");
        return 2;
    }
    std::vector<postmortem::NodeRecord> recs;
    for (const auto& a : args) {
        const auto files = record_files(a);
        if (!files) {
            std::fprintf(stderr, "gangway postmortem: %s\n", files.error().c_str());
            return 1;
        }
        for (const auto& f : *files) {
            const auto text = sys::read_file(f, sys::ReadOptions(postmortem::kMaxRecordBytes));
            if (!text) {
                std::fprintf(stderr, "gangway postmortem: %s\n", text.error().c_str());
                return 1;
            }
            try {
                recs.push_back(postmortem::parse_node_record(*text));
            } catch (const Error& e) {
                std::fprintf(stderr, "gangway postmortem: %s: %s\n", printable_name(f, 256).c_str(), e.what());
                return 1;
            }
        }
    }
    try {
        return print_verdict(recs, lost);
    } catch (const Error& e) {
        std::fprintf(stderr, "gangway postmortem: %s\n", e.what());
        return 1;
    }
}

}  // namespace gangway::cli
