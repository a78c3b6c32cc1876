// The preflight's TCP rendezvous at scale, on loopback: one coordinator and N
// authenticated clients (client threads, many connections each, all with the
// same code path as `gangway run`: connect, read the nonce, send an HMAC'd
// hello, wait for the welcome). Prints the time from the coordinator starting
// to listen until every client holds its welcome: the check-in barrier.
//   bench/rendezvous_bench [N=4096] [REPEATS=3] [CLIENT_THREADS=16]
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "../lib/base/text.hpp"
#include "../lib/preflight/protocol.hpp"
#include "../lib/sys/net/rendezvous.hpp"

using namespace gangway;

int main(int argc, char** argv) {
    std::optional<unsigned> args[] = {4096u, 3u, 16u};  // each a count, its default when absent
    for (int i = 1; i < argc && i <= 3; ++i) args[i - 1] = parse_uint(argv[i]);
    if (argc > 4 || !args[0] || !args[1] || !args[2] || *args[2] == 0) {
        std::fprintf(stderr, "usage: rendezvous_bench [N=4096] [REPEATS=3] [CLIENT_THREADS=16]\n");
        return 2;
    }
    const unsigned n = *args[0], repeats = *args[1], threads = *args[2];
    rlimit rl{};
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2 * n + 64) {
        std::fprintf(stderr, "rendezvous_bench: need %u open files, the limit is %lu\n", 2 * n + 64,
                     static_cast<unsigned long>(rl.rlim_cur));
        return 1;
    }
    const std::string key(32, 'k');
    int failures = 0;
    for (unsigned rep = 0; rep < repeats; ++rep) {
        const auto t0 = sys::Clock::now();
        auto l = sys::tcp_listen("127.0.0.1", 0, 8192);
        if (!l) {
            std::fprintf(stderr, "rendezvous_bench: %s\n", l.error().c_str());
            return 1;
        }
        const unsigned port = sys::local_port(l->get());
        sys::Coordinator coord(key, std::move(*l));
        std::atomic<unsigned> welcomed{0}, failed{0};
        std::vector<std::thread> clients;
        for (unsigned t = 0; t < threads; ++t)
            clients.emplace_back([&, t] {
                std::vector<sys::Conn> mine;
                for (unsigned r = t; r < n; r += threads) {
                    const preflight::Kv hello{{"rank", std::to_string(r)}, {"node_rank", std::to_string(r / 8)},
                                              {"local", std::to_string(r % 8)}, {"speaker", "0"}};
                    auto c = sys::join({"127.0.0.1"}, port, key, hello, sys::after_ms(10000));
                    if (!c) {
                        failed++;
                        continue;
                    }
                    mine.push_back(std::move(*c));
                }
                for (auto& c : mine) {
                    auto got = c.recv(sys::after_ms(10000));
                    if (got && got->type == preflight::kWelcome) welcomed++;
                    else failed++;
                }
            });
        if (auto g = coord.gather(n, sys::after_ms(10000)); !g) {
            std::fprintf(stderr, "rendezvous_bench: %s\n", g.error().c_str());
            return 1;
        }
        const double gathered = sys::seconds_since(t0);
        for (auto& m : coord.members()) coord.send(m, preflight::kWelcome, {}, sys::after_ms(2000));
        for (auto& c : clients) c.join();
        const double all = sys::seconds_since(t0);
        std::printf("rendezvous of %u ranks on loopback: all checked in after %.3f s, all welcomed after %.3f s "
                    "(%u welcomed, %u failed, %u rejected)\n",
                    n, gathered, all, welcomed.load(), failed.load(), coord.rejected());
        if (welcomed != n) ++failures;
    }
    return failures ? 1 : 0;
}
