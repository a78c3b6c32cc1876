// Version texts of a node's files and commands: the NVIDIA driver's /proc
// line, CUDA's version.json and version.txt, NCCL's file name, SLURM's
// version output.
#include "lib/preflight/version_text.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace p = gangway::preflight;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The heap budget (SECURITY.md): each reader: 2 n at most.
    const gangway::fuzz::HeapBudget budget(size, 8, 64u << 10);
    const auto in = gangway::fuzz::text(data, size);
    const auto fields = gangway::fuzz::two_fields(in);
    const auto a = fields.first, b = fields.second;
    gangway::fuzz::refusable([&] {
        (void)p::driver_version_from_proc(in);
        (void)p::cuda_version_from_json(in);
        (void)p::cuda_version_from_txt(in);
        (void)p::nccl_version_from_soname(in);
        (void)p::version_less(a, b);
        if (const auto v = p::slurm_version_in(in)) (void)v->text();
    });
    return 0;
}
