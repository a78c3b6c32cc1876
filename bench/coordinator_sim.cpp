// The coordinator at scale, on loopback: the real `gangway check` process as
// node 0 of an N-node step (its environment is what the plugin gives node 0's
// first task), and N-1 simulated speakers in this one process. The simulated
// speakers join over TCP with the real authenticated hello and a real card of
// this machine (so that the cards agree), then answer every command on one
// epoll thread with synthetic but well-formed results:
//   kReach: every target ok in a fraction of a millisecond (any number of targets);
//   kBw:    answered after the round's duration_ms with a synthetic rate
//           (--gbps, default 1 Gbit/s; --slow=K[,K...] makes those nodes' links
//           run at a tenth of it);
//   --faulty=K[,K...]: those nodes' cuda stage fails (named faulty at once);
//           nothing is streamed between simulated nodes: the data plane is
//           not simulated. Links that involve node 0 are real: node 0's own
//           speaker (a thread of the real process) probes and streams to this
//           process's data listener, and a simulated node whose round sends to
//           node 0 streams to it for real (lib/sys/preflight/data.cpp's stream_to);
//   kLocal: cuda, nccl and verbs skipped ("no GPU", as on a node without GPUs);
//   kNccl/kRdma: a refusal (no simulated node has GPUs or RDMA ports, so the
//           coordinator should never send them: counted as an error).
// Any number of commands of any type are answered, in any order: confirmation
// and retest rounds reuse kReach/kBw and need nothing new here.
//
// Measures, per run: the check's wall time (process start to exit), commands
// per type and bandwidth rounds, frame bytes the coordinator sent to and got
// from the simulated speakers (length prefix, header, payload and MAC; not
// counting node 0's own speaker's connection, nor TCP/IP headers), the
// coordinator's CPU time and peak RSS (wait4's rusage), its peak threads and
// open descriptors (/proc/PID sampled every 20 ms), and the sizes of the
// report JSON and the heatmap SVG it wrote.
//
//   bench/coordinator_sim --nodes=N [--tasks-per-node=1] [--check=quick|full] [--gbps=1] [--slow=K[,K...]]
//       [--out=DIR] [--gangway=PATH] [--port=P] [--join-threads=16] [--heatmap=0] [--all-nics=1] [--extra-nics=K] [-- ARGS for gangway check]
//   bench/coordinator_sim --resolve=NAME [--count=1000]: the cost of one name lookup (resolve_host) here
// Exit status 0 when every simulated speaker joined and got the verdict, the
// report names every task, and the verdict is ok (or, with --slow, exactly
// those nodes are named); 1 otherwise; 2 on usage. Needs about N+100 open files
// (it raises its soft limit to the hard one, and so does the coordinator).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../lib/sys/preflight/internal.hpp"
#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/preflight/card.hpp"
#include "../lib/preflight/protocol.hpp"
#include "../lib/sys/net/rendezvous.hpp"
#include "../lib/sys/node/addrs.hpp"
#include "../lib/sys/devices/node_card.hpp"
#include "../lib/sys/node/sysfs.hpp"
#include "config.h"

extern char** environ;

using namespace gangway;
using preflight::Kv;
using sys::after_ms;
using sys::Clock;

namespace {

struct Args {
    unsigned nodes = 64;
    std::string check = "quick";
    double gbps = 1.0;
    std::set<unsigned> slow;
    std::set<unsigned> faulty;  // their kLocal answer says the cuda stage failed: named faulty, no confirmation rounds
    std::set<std::pair<unsigned, unsigned>> slow_links;  // from -> to at a tenth of the rate, both ends fine elsewhere
    std::set<std::pair<unsigned, unsigned>> dead_links;  // from -> to: probes time out, streams never arrive
    unsigned tasks_per_node = 1;  // the other tasks join too (a step without PMIx) and wait for the verdict
    std::string out = ".";
    std::string gangway;
    unsigned port = 0;
    unsigned join_threads = 16;
    bool heatmap = true;
    bool all_nics = false;  // every interface of this machine in the cards, as before card_nics
    unsigned extra_nics = 0;  // with all_nics: as many more (veth-like) interfaces on every simulated node
    std::string resolve;  // --resolve=NAME: time lib/sys/node's resolve_host of NAME instead (name resolution's model)
    unsigned count = 1000;
    std::vector<std::string> extra;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "coordinator_sim: %s\nusage: coordinator_sim --nodes=N [--tasks-per-node=1] [--check=quick|full] [--gbps=1] [--slow=K[,K...]] [--faulty=K[,K...]] "
                 "[--slow-link=A-B[,A-B...]] [--dead-link=A-B[,...]] [--out=DIR] [--gangway=PATH] [--port=P] [--join-threads=16] [--heatmap=0] [--all-nics=1] [--extra-nics=K] [-- ARGS for gangway check]\n",
                 why);
    std::exit(2);
}

Args parse_args(int argc, char** argv) {
    Args a;
    const char* env_bin = std::getenv("GANGWAY_BIN");
    a.gangway = env_bin ? env_bin : "launcher/gangway";
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        if (s == "--") {
            for (++i; i < argc; ++i) a.extra.push_back(argv[i]);
            break;
        }
        const auto eq = s.find('=');
        if (s.rfind("--", 0) != 0 || eq == std::string::npos) usage(("bad argument " + s).c_str());
        const std::string k = s.substr(2, eq - 2), v = s.substr(eq + 1);
        auto count = [&](unsigned lo) {
            const auto n = parse_uint(v);
            if (!n || *n < lo) usage(("bad --" + k).c_str());
            return *n;
        };
        if (k == "nodes") a.nodes = count(2);
        else if (k == "check") a.check = v;
        else if (k == "gbps") a.gbps = std::atof(v.c_str());
        else if (k == "slow") {
            for (const auto& w : split_nonempty(v, ',')) {
                const auto x = parse_uint(w);
                if (!x || *x < 1) usage("bad --slow");
                a.slow.insert(*x);
            }
        } else if (k == "faulty") {
            for (const auto& w : split_nonempty(v, ',')) {
                const auto x = parse_uint(w);
                if (!x || *x < 1) usage("bad --faulty");
                a.faulty.insert(*x);
            }
        } else if (k == "slow-link" || k == "dead-link") {
            for (const auto& w : split_nonempty(v, ',')) {
                const auto ab = split_nonempty(w, '-');
                const auto x = ab.size() == 2 ? parse_uint(ab[0]) : std::nullopt, y = ab.size() == 2 ? parse_uint(ab[1]) : std::nullopt;
                if (!x || !y || *x < 1 || *y < 1 || *x == *y) usage(("bad --" + k + ": A-B, two simulated nodes").c_str());
                (k == "slow-link" ? a.slow_links : a.dead_links).insert({*x, *y});
            }
        } else if (k == "tasks-per-node") a.tasks_per_node = count(1);
        else if (k == "out") a.out = v;
        else if (k == "gangway") a.gangway = v;
        else if (k == "port") a.port = count(1024);
        else if (k == "join-threads") a.join_threads = count(1);
        else if (k == "heatmap") a.heatmap = v != "0";
        else if (k == "all-nics") a.all_nics = v != "0";
        else if (k == "extra-nics") a.extra_nics = count(0);
        else if (k == "resolve") a.resolve = v;
        else if (k == "count") a.count = count(1);
        else usage(("unknown option --" + k).c_str());
    }
    if (a.gbps <= 0) usage("--gbps must be positive");
    if (!a.slow.empty() && *a.slow.rbegin() >= a.nodes) usage("--slow must name simulated nodes (1..N-1)");
    if (!a.faulty.empty() && *a.faulty.rbegin() >= a.nodes) usage("--faulty must name simulated nodes (1..N-1)");
    for (const auto* links : {&a.slow_links, &a.dead_links})
        for (const auto& [x, y] : *links)
            if (x >= a.nodes || y >= a.nodes) usage("--slow-link and --dead-link must name simulated nodes (1..N-1)");
    return a;
}

std::size_t frame_bytes(const Kv& kv) { return 4 + 1 + 8 + preflight::encode_kv(kv).size() + preflight::kMacBytes; }

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

// A port P with P+1 and P+2 free (the rendezvous and node 0's data listener).
unsigned pick_port() {
    std::mt19937 rng(static_cast<unsigned>(::getpid()) ^ static_cast<unsigned>(Clock::now().time_since_epoch().count()));
    for (int tries = 0; tries < 200; ++tries) {
        const unsigned p = 20000 + (rng() % 2500) * 4 + 1;  // below the ephemeral range
        auto a = sys::tcp_listen("", p + 1, 1);
        auto b = sys::tcp_listen("127.0.0.1", p + 2, 1);
        if (a && b) return p;
    }
    return 0;
}

// The coordinator's threads, descriptors and RSS, sampled from /proc until stopped.
struct Sampler {
    pid_t pid = 0;
    std::atomic<bool> stop{false};
    long peak_threads = 0, peak_fds = 0, peak_rss_kb = 0, samples = 0;
    double main_cpu_s = 0;  // the main thread's (the coordination's) CPU time, last sample
    std::thread th;
    void run() {
        const std::string base = "/proc/" + std::to_string(pid);
        while (!stop) {
            std::ifstream st(base + "/status");
            std::string line;
            while (std::getline(st, line)) {
                if (line.rfind("Threads:", 0) == 0) peak_threads = std::max(peak_threads, std::atol(line.c_str() + 8));
                if (line.rfind("VmRSS:", 0) == 0) peak_rss_kb = std::max(peak_rss_kb, std::atol(line.c_str() + 6));
            }
            if (DIR* d = ::opendir((base + "/fd").c_str())) {
                long n = 0;
                while (dirent* e = ::readdir(d))
                    if (e->d_name[0] != '.') ++n;
                ::closedir(d);
                peak_fds = std::max(peak_fds, n);
            }
            {
                std::ifstream ss(base + "/task/" + std::to_string(pid) + "/schedstat");
                double ns = 0;
                if (ss >> ns) main_cpu_s = ns / 1e9;
            }
            ++samples;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
};

// The simulated speakers' shared data listener: answers node 0's probes, and
// reads node 0's bandwidth streams to the end (so its sender sees them arrive).
void data_listener(const std::string& key, sys::Fd l, std::atomic<bool>& stop, std::atomic<unsigned>& probes,
                   std::atomic<unsigned>& streams) {
    using namespace preflight;
    while (!stop) {
        if (!sys::wait_readable(l.get(), after_ms(100))) continue;
        for (;;) {
            sys::Fd fd = sys::tcp_accept(l.get());
            if (!fd) break;
            std::thread([&key, &probes, &streams](sys::Fd fd) {
                auto c = sys::accept_conn(std::move(fd), key, after_ms(2000));
                if (!c) return;
                auto got = c->recv(after_ms(3000));
                if (!got || got->type != kData) return;
                const auto kind = got->kv.count("kind") ? got->kv.at("kind") : "";
                if (kind == "probe") {
                    (void)c->send(kProbeOk, {{"from", got->kv.count("to") ? got->kv.at("to") : "0"}}, after_ms(1000));
                    sys::wait_readable(c->fd.get(), after_ms(1000));
                    ++probes;
                    return;
                }
                if (kind != "bw") return;
                std::vector<char> buf(1 << 20);
                const auto end = after_ms(30000);
                for (;;) {
                    const ssize_t r = ::recv(c->fd.get(), buf.data(), buf.size(), 0);
                    if (r > 0) continue;
                    if (r == 0) break;
                    if (errno == EINTR) continue;
                    if ((errno == EAGAIN || errno == EWOULDBLOCK) && sys::wait_readable(c->fd.get(), end)) continue;
                    break;
                }
                ::shutdown(c->fd.get(), SHUT_RDWR);
                ++streams;
            }, std::move(fd)).detach();
        }
    }
}

struct Speaker {  // a simulated task: its node's speaker when local == 0
    unsigned node = 0, local = 0;
    sys::Conn conn;
    bool open = false, verdict = false;
    std::string verdict_text;
};

struct Pending {
    Clock::time_point at;
    unsigned speaker;
    std::uint8_t type;
    Kv kv;
    bool operator>(const Pending& o) const { return at > o.at; }
};

}  // namespace

int main(int argc, char** argv) {
    const Args a = parse_args(argc, argv);
    if (!a.resolve.empty()) {  // what one of the plugin's name lookups costs here (spank/remote.cpp resolves every node)
        std::size_t found = 0;
        const auto t = Clock::now();
        for (unsigned i = 0; i < a.count; ++i) found += sys::resolve_host(a.resolve).size();
        const double s = sys::seconds_since(t);
        std::printf("resolve=%s count=%u addresses=%zu total_s=%.3f per_lookup_us=%.1f\n", a.resolve.c_str(), a.count, found,
                    s, s * 1e6 / a.count);
        return 0;
    }
    const unsigned n = a.nodes, ranks = a.nodes * a.tasks_per_node;
    ::signal(SIGPIPE, SIG_IGN);
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2 * ranks + 256) {  // the sim's end of every connection, and the coordinator's
        std::fprintf(stderr, "coordinator_sim: need %u open files, the hard limit is %lu\n", 2 * ranks + 256,
                     static_cast<unsigned long>(rl.rlim_cur));
        return 1;
    }
    ::mkdir(a.out.c_str(), 0755);
    const unsigned port = a.port ? a.port : pick_port();
    if (!port) {
        std::fprintf(stderr, "coordinator_sim: no free port block found\n");
        return 1;
    }
    auto secret = sys::random_bytes(32);
    if (!secret) {
        std::fprintf(stderr, "coordinator_sim: %s\n", secret.error().c_str());
        return 1;
    }
    std::string hex;
    for (unsigned char ch : *secret) {
        char b[3];
        std::snprintf(b, sizeof b, "%02x", ch);
        hex += b;
    }
    const std::string key = preflight::key_from_secret(hex);

    auto dl = sys::tcp_listen("127.0.0.1", 0, 4096);
    if (!dl) {
        std::fprintf(stderr, "coordinator_sim: data listener: %s\n", dl.error().c_str());
        return 1;
    }
    const unsigned data_port = sys::local_port(dl->get());
    std::atomic<bool> stop{false};
    std::atomic<unsigned> probes{0}, streams{0};
    std::thread data_th(data_listener, std::cref(key), std::move(*dl), std::ref(stop), std::ref(probes), std::ref(streams));

    // Node 0: the real gangway check, with node 0's step environment.
    const std::string report = a.out + "/report.json", heatmap = a.out + "/heatmap.svg", errlog = a.out + "/gangway.err";
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string s = *e;
        if (s.rfind("SLURM_", 0) == 0 || s.rfind("GANGWAY_", 0) == 0 || s.rfind("PRIMARY_", 0) == 0 ||
            s.rfind("MASTER_", 0) == 0 || s.rfind("NODE_ADDR", 0) == 0 || s.rfind("NCCL_", 0) == 0)
            continue;
        env.push_back(s);
    }
    const std::string nodelist = "sim[0-" + std::to_string(n - 1) + "]";
    for (const std::string& s : std::vector<std::string>{
             "SLURM_JOB_ID=77", "SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=" + nodelist, "SLURM_STEP_NUM_NODES=" + std::to_string(n),
          "SLURM_STEP_NUM_TASKS=" + std::to_string(ranks),
          "SLURM_STEP_TASKS_PER_NODE=" + std::to_string(a.tasks_per_node) + "(x" + std::to_string(n) + ")",
          std::string("SLURM_PROCID=0"), std::string("SLURM_NODEID=0"), std::string("SLURM_LOCALID=0"),
          std::string("PRIMARY_ADDR=127.0.0.1"), "PRIMARY_PORT=" + std::to_string(port), std::string("NODE_ADDR=127.0.0.1"),
          std::string("NCCL_SOCKET_IFNAME==lo"), "GANGWAY_SECRET=" + hex, std::string("GANGWAY_DRAIN_DIR=")})
        env.push_back(s);
    std::vector<std::string> args{a.gangway, "check", "--check=" + a.check, "--report=" + report};
    if (a.heatmap) args.push_back("--heatmap=" + heatmap);
    args.insert(args.end(), a.extra.begin(), a.extra.end());
    std::vector<char*> argp, envp;
    for (auto& s : args) argp.push_back(s.data());
    argp.push_back(nullptr);
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    ::unlink(report.c_str());
    ::unlink(heatmap.c_str());
    ::unlink(errlog.c_str());
    const auto t0 = Clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::perror("fork");
        return 1;
    }
    if (pid == 0) {
        // A stream, not a whole file: created afresh (unlinked above), never
        // through a link; open(), not fopen(), in this child of a threaded parent.
        if (const int fd = ::open(errlog.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644); fd >= 0)
            ::dup2(fd, 2);
        ::execve(argp[0], argp.data(), envp.data());
        std::perror("execve");
        ::_exit(127);
    }
    Sampler sampler;
    sampler.pid = pid;
    sampler.th = std::thread(&Sampler::run, &sampler);

    // The simulated speakers join, a few threads at a time, as the real ones would.
    preflight::Card card;
    card.hostname = "sim";
    card.data_iface = "lo";
    card.data_addr = "127.0.0.1";
    card.data_port = data_port;
    card.nics = sys::live_net_nics();
    const auto root = sys::sysfs_root();
    for (auto& nic : sys::read_nics(root))
        if (nic.kind == "ib") card.nics.push_back(nic);
    for (unsigned k = 0; k < a.extra_nics; ++k)  // a container host's or SR-IOV node's many interfaces
        card.nics.push_back({"vethsim" + std::to_string(k), "net", "up", 10000, {"fe80::" + std::to_string(k + 1) + ":ff:fe00:1"}});
    if (!a.all_nics) card.nics = preflight::card_nics(std::move(card.nics), card.data_iface);  // as the speaker's card
    card.gpus = sys::count_gpus(root);
    card.versions = sys::read_versions("/");
    card.versions["gangway"] = PACKAGE_VERSION;
    std::vector<Speaker> sp(ranks);  // index = rank; rank 0 is the real coordinator
    std::atomic<unsigned> join_failed{0};
    std::atomic<std::size_t> bytes_to_coord{0};
    {
        std::vector<std::thread> th;
        for (unsigned t = 0; t < a.join_threads; ++t)
            th.emplace_back([&, t] {
                for (unsigned i = 1 + t; i < ranks; i += a.join_threads) {
                    const unsigned node = i / a.tasks_per_node, local = i % a.tasks_per_node;
                    Kv hello{{"rank", std::to_string(i)}, {"node_rank", std::to_string(node)}, {"local", std::to_string(local)},
                             {"speaker", local == 0 ? "1" : "0"}};
                    if (local == 0) {
                        preflight::Card c = card;
                        c.node_rank = node;
                        c.node = "sim" + std::to_string(node);
                        preflight::card_to_kv(c, hello);
                    }
                    auto conn = sys::join({"127.0.0.1"}, port + 1, key, hello, after_ms(60000));
                    if (!conn) {
                        std::fprintf(stderr, "coordinator_sim: node %u could not join: %s\n", i, conn.error().c_str());
                        ++join_failed;
                        continue;
                    }
                    bytes_to_coord += frame_bytes(hello);
                    sp[i].node = node;
                    sp[i].local = local;
                    sp[i].conn = std::move(*conn);
                    sp[i].open = true;
                }
            });
        for (auto& x : th) x.join();
    }
    const double joined_s = sys::seconds_since(t0);

    // One epoll thread answers every command.
    const int ep = ::epoll_create1(EPOLL_CLOEXEC);
    int wake[2];
    if (ep < 0 || ::pipe2(wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        std::perror("epoll/pipe");
        return 1;
    }
    {
        epoll_event e{};
        e.events = EPOLLIN;
        e.data.u32 = ~0u;
        ::epoll_ctl(ep, EPOLL_CTL_ADD, wake[0], &e);
    }
    unsigned open_count = 0;
    for (unsigned i = 1; i < ranks; ++i)
        if (sp[i].open) {
            epoll_event e{};
            e.events = EPOLLIN;
            e.data.u32 = i;
            ::epoll_ctl(ep, EPOLL_CTL_ADD, sp[i].conn.fd.get(), &e);
            ++open_count;
        }
    std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> timers;
    std::mutex done_mu;
    std::vector<Pending> done;  // answers finished by stream threads
    std::vector<std::thread> streamers;
    std::map<std::uint8_t, unsigned> commands;
    std::map<std::string, unsigned> bw_rounds;  // round id -> commands
    std::size_t bytes_from_coord = 16ull * open_count;  // the nonces
    unsigned errors = 0, lost = 0, verdicts = 0;
    double verdict_s = 0;  // when the last simulated speaker had the verdict
    const double rate = a.gbps * 1e9 / 8;
    auto rate_for = [&](unsigned self, unsigned peer) {  // what self receives from peer
        const bool slow = a.slow.count(self) || a.slow.count(peer) || a.slow_links.count({peer, self});
        return slow ? rate / 10 : rate * (0.97 + 0.06 * ((self * 7919 + peer * 104729) % 101) / 100.0);
    };
    std::map<std::uint8_t, std::size_t> bytes_in, bytes_out;  // per message type, from and to the coordinator
    bytes_out[preflight::kHello] = bytes_to_coord;
    auto send_answer = [&](unsigned i, std::uint8_t type, const Kv& kv) {
        if (!sp[i].open) return;
        bytes_to_coord += frame_bytes(kv);
        bytes_out[type] += frame_bytes(kv);
        if (auto s = sp[i].conn.send(type, kv, after_ms(5000)); !s) {
            std::fprintf(stderr, "coordinator_sim: node %u: answer not sent: %s\n", i, s.error().c_str());
            ++errors;
        }
    };
    auto close_speaker = [&](unsigned i) {
        ::epoll_ctl(ep, EPOLL_CTL_DEL, sp[i].conn.fd.get(), nullptr);
        sp[i].conn.fd.reset();
        sp[i].open = false;
        --open_count;
    };
    auto handle = [&](unsigned i, sys::Conn::Got& g) {
        using namespace preflight;
        ++commands[g.type];
        bytes_from_coord += frame_bytes(g.kv);
        bytes_in[g.type] += frame_bytes(g.kv);
        const Kv& cmd = g.kv;
        auto get = [&](const char* k) { auto it = cmd.find(k); return it == cmd.end() ? std::string() : it->second; };
        switch (g.type) {
            case kWelcome: return;
            case kVerdict:
                sp[i].verdict = true;
                verdict_s = std::max(verdict_s, sys::seconds_since(t0));
                sp[i].verdict_text = get("verdict");
                ++verdicts;
                close_speaker(i);
                return;
            case kReach:
            case kBw:
            case kLocal:
            case kNccl:
            case kRdma:
                if (sp[i].local == 0) break;
                ++errors;  // a plain task is never asked anything
                std::fprintf(stderr, "coordinator_sim: rank %u (not a speaker) got command %u\n", i, unsigned(g.type));
                return;
            default: break;
        }
        const unsigned me = sp[i].node;
        switch (g.type) {
            case kReach: {
                const auto k = std::min<std::uint64_t>(kv_u64(cmd, "n"), 4096);
                Kv out{{"n", std::to_string(k)}};
                for (std::uint64_t t = 0; t < k; ++t) {
                    const auto p = "r." + std::to_string(t) + ".";
                    const auto to = static_cast<unsigned>(kv_u64(cmd, "t." + std::to_string(t) + ".rank"));
                    const bool dead = a.dead_links.count({me, to}) > 0;
                    out[p + "ok"] = dead ? "0" : "1";
                    out[p + "ms"] = num(0.05 + 0.01 * ((i + t) % 10));
                    out[p + "error"] = dead ? "connect timed out" : "";
                }
                timers.push({Clock::now() + std::chrono::milliseconds(1), i, kReachResult, std::move(out)});
                return;
            }
            case kBw: {
                const auto round = get("round");
                ++bw_rounds[round];
                const long dur = static_cast<long>(kv_u64(cmd, "duration_ms"));
                const bool sends = get("send") == "1", recvs = get("recv") == "1";
                Kv out{{"round", round}, {"rx_ok", "0"}, {"rx_bps", "0"}, {"rx_error", ""}, {"tx_ok", "0"}, {"tx_error", ""}};
                if (recvs) {
                    const auto from = static_cast<unsigned>(kv_u64(cmd, "from_rank"));
                    if (a.dead_links.count({from, me})) {
                        out["rx_error"] = "no stream arrived from the peer";
                    } else {
                        out["rx_ok"] = "1";
                        out["rx_bps"] = num(rate_for(me, from));
                    }
                }
                const unsigned to = sends ? static_cast<unsigned>(kv_u64(cmd, "to_rank")) : 0;  // a receiver has no to_rank
                if (sends && a.dead_links.count({me, to})) out["tx_error"] = "connect timed out";
                else if (sends) out["tx_ok"] = "1";
                if (sends && to == 0) {  // node 0 is real: stream to it
                    const auto addr = kv_str(cmd, "to_addr");
                    const auto to_port = static_cast<unsigned>(kv_u64(cmd, "to_port"));
                    const auto r = static_cast<unsigned>(kv_u64(cmd, "round"));
                    const long warm = static_cast<long>(kv_u64(cmd, "warm_ms"));
                    const auto wb = static_cast<std::size_t>(std::clamp<std::uint64_t>(kv_u64(cmd, "write_bytes"), 4096, 16 << 20));
                    streamers.emplace_back([&, i, me, out, addr, to_port, r, dur, warm, wb]() mutable {
                        const auto tx = sys::pf::stream_to(key, me, 0, addr, to_port, r, dur, warm, wb);
                        out["tx_ok"] = tx.ok ? "1" : "0";
                        out["tx_error"] = tx.error;
                        std::lock_guard<std::mutex> l(done_mu);
                        done.push_back({Clock::now(), i, kBwResult, std::move(out)});
                        (void)!::write(wake[1], "x", 1);
                    });
                    return;
                }
                timers.push({Clock::now() + std::chrono::milliseconds(dur), i, kBwResult, std::move(out)});
                return;
            }
            case kLocal: {
                Kv out{{"n", "3"}, {"gpus", "0"}, {"nccl_lib", ""}, {"ports", "0"}};
                const char* why[] = {"no NVIDIA GPU (simulated node)", "no NVIDIA GPU (simulated node)",
                                     "no RDMA device (simulated node)"};
                const char* names[] = {"cuda", "nccl", "verbs"};
                for (int s = 0; s < 3; ++s) {
                    const auto p = "s." + std::to_string(s) + ".";
                    out[p + "name"] = names[s];
                    const bool fails = s == 0 && a.faulty.count(me);
                    out[p + "status"] = fails ? "failed" : "skipped";
                    out[p + "detail"] = fails ? "simulated failure" : why[s];
                    out[p + "seconds"] = "0";
                    out[p + "findings"] = "0";
                }
                timers.push({Clock::now(), i, kLocalResult, std::move(out)});
                return;
            }
            case kNccl:
            case kRdma:
                ++errors;
                std::fprintf(stderr, "coordinator_sim: node %u got a %s command: a simulated node has neither\n", i,
                             g.type == kNccl ? "kNccl" : "kRdma");
                timers.push({Clock::now(), i, static_cast<std::uint8_t>(g.type + 1),
                             {{"ok", "0"}, {"error", "simulated node: no GPU, no RDMA"}}});
                return;
            default:
                ++errors;
                std::fprintf(stderr, "coordinator_sim: node %u: unknown command type %u\n", i, unsigned(g.type));
        }
    };
    std::vector<epoll_event> evs(1024);
    int status = 0;
    rusage ru{};
    bool exited = false;
    Clock::time_point exited_at;
    while (!exited || open_count > 0) {
        if (!exited) {
            const pid_t w = ::wait4(pid, &status, WNOHANG, &ru);
            if (w == pid) {
                exited = true;
                exited_at = Clock::now();
            }
        }
        // The coordinator is gone: every connection reads what it sent (the verdict)
        // and then its end. Whoever is still open 10 s later lost it.
        if (exited && sys::seconds_since(exited_at) > 10) {
            for (unsigned i = 1; i < ranks; ++i)
                if (sp[i].open) {
                    ++lost;
                    close_speaker(i);
                }
            break;
        }
        int wait_ms = 50;
        if (!timers.empty())
            wait_ms = std::clamp<int>(static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timers.top().at - Clock::now()).count()), 0, 50);
        const int r = ::epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), wait_ms);
        for (int k = 0; k < r; ++k) {
            const unsigned i = evs[k].data.u32;
            if (i == ~0u) {
                char b[64];
                while (::read(wake[0], b, sizeof b) > 0) {
                }
                continue;
            }
            if (!sp[i].open) continue;
            std::vector<sys::Conn::Got> got;
            const auto open = sp[i].conn.pump(got);
            for (auto& g : got) {
                if (!sp[i].open) break;
                try {
                    handle(i, g);
                } catch (const Error& e) {
                    ++errors;
                    std::fprintf(stderr, "coordinator_sim: node %u: bad command: %s\n", i, e.what());
                }
            }
            if (!open && sp[i].open) {
                ++lost;
                close_speaker(i);
            }
        }
        {
            std::lock_guard<std::mutex> l(done_mu);
            for (auto& d : done) timers.push(std::move(d));
            done.clear();
        }
        while (!timers.empty() && timers.top().at <= Clock::now()) {
            auto p = timers.top();
            timers.pop();
            send_answer(p.speaker, p.type, p.kv);
        }
    }
    if (!exited) ::wait4(pid, &status, 0, &ru);
    const double wall = sys::seconds_since(t0);
    sampler.stop = true;
    sampler.th.join();
    for (auto& t : streamers) t.join();
    stop = true;
    data_th.join();

    // The report: its size, the verdict, the join line, the bad nodes.
    std::string rep;
    {
        std::ifstream f(report);
        std::stringstream ss;
        ss << f.rdbuf();
        rep = ss.str();
    }
    struct stat st {};
    const long svg_bytes = ::stat(heatmap.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
    auto field = [&](const std::string& k) {
        const auto p = rep.find("\"" + k + "\": \"");
        if (p == std::string::npos) return std::string();
        const auto b = p + k.size() + 5;
        return rep.substr(b, rep.find('"', b) - b);
    };
    const std::string verdict = field("verdict");
    const std::string tasks = std::to_string(ranks) + "/" + std::to_string(ranks) + " tasks";
    const bool all_joined = rep.find(tasks) != std::string::npos;
    std::vector<std::string> named;  // nodes whose status is not ok
    for (std::size_t p = 0; (p = rep.find("\"name\": \"sim", p)) != std::string::npos; ++p) {
        const auto e = rep.find('"', p + 9);
        const std::string name = rep.substr(p + 9, e - p - 9);
        const auto sp2 = rep.find("\"status\": \"", e);
        if (sp2 == std::string::npos) break;
        const std::string stv = rep.substr(sp2 + 11, rep.find('"', sp2 + 11) - sp2 - 11);
        if (stv != "ok") named.push_back(name + "=" + stv);
    }
    std::string stages;  // "name:seconds" from the report
    for (std::size_t p = 0; (p = rep.find("{\"name\": \"", p)) != std::string::npos; ++p) {
        const auto e = rep.find('"', p + 10);
        const std::string name = rep.substr(p + 10, e - p - 10);
        const auto obj_end = rep.find('}', e);
        const auto sp2 = rep.find("\"seconds\": ", e);
        if (sp2 == std::string::npos || sp2 > obj_end) continue;
        stages += (stages.empty() ? "" : ",") + name + ":" + num(std::atof(rep.c_str() + sp2 + 11));
    }
    unsigned no_verdict = 0;
    for (unsigned i = 1; i < ranks; ++i)
        if (!sp[i].verdict) ++no_verdict;
    const double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    using namespace preflight;
    std::printf("nodes=%u tasks=%u check=%s exit=%d verdict=%s all_joined=%d no_verdict=%u lost=%u errors=%u join_failed=%u "
                "wall_s=%.3f verdict_s=%.3f sim_joined_s=%.3f cpu_s=%.3f main_cpu_s=%.3f user_s=%.3f sys_s=%.3f maxrss_kb=%ld peak_rss_kb=%ld "
                "peak_threads=%ld peak_fds=%ld samples=%ld cmd_reach=%u cmd_bw=%u bw_rounds=%zu cmd_local=%u cmd_nccl=%u "
                "cmd_rdma=%u cmd_welcome=%u cmd_verdict=%u bytes_from_coord=%zu bytes_to_coord=%zu node0_probes=%u "
                "node0_streams=%u report_bytes=%zu svg_bytes=%ld named=%s stages=%s\n",
                n, ranks, a.check.c_str(), WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), verdict.c_str(),
                all_joined, no_verdict, lost, errors, join_failed.load(), wall, verdict_s, joined_s, cpu, sampler.main_cpu_s,
                ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss,
                sampler.peak_rss_kb, sampler.peak_threads, sampler.peak_fds, sampler.samples, commands[kReach], commands[kBw],
                bw_rounds.size(), commands[kLocal], commands[kNccl], commands[kRdma], commands[kWelcome], commands[kVerdict],
                bytes_from_coord, bytes_to_coord.load(), probes.load(), streams.load(), rep.size(), svg_bytes,
                named.empty() ? "-" : join(named, ",").c_str(), stages.c_str());
    std::string per_type;
    for (auto* m : {&bytes_in, &bytes_out})
        for (const auto& [t, b] : *m) per_type += (per_type.empty() ? "" : ",") + std::string(m == &bytes_in ? "in" : "out") + std::to_string(t) + ":" + std::to_string(b);
    std::printf("bytes_by_type=%s (inT: coordinator -> speakers, outT: speakers -> coordinator, T the message type of lib/preflight/protocol.hpp)\n", per_type.c_str());
    bool good = all_joined && no_verdict == 0 && lost == 0 && errors == 0 && join_failed == 0;
    std::vector<std::string> want;
    for (unsigned k : a.slow) want.push_back("sim" + std::to_string(k) + "=slow");
    for (unsigned k : a.faulty) want.push_back("sim" + std::to_string(k) + "=faulty");
    std::sort(want.begin(), want.end());
    std::sort(named.begin(), named.end());
    // Link faults alone name nobody and degrade the verdict (findings); the
    // caller (tests/coordinator_sim.sh) counts the findings in the report.
    const bool link_faults = !a.slow_links.empty() || !a.dead_links.empty();
    good = good && named == want && (!want.empty() || verdict == (link_faults ? "degraded" : "ok"));
    return good ? 0 : 1;
}
