// The cuda stage's computation check is PTX text compiled by the driver at
// run time; no GPU is here to run it, but ptxas (the assembler the driver's
// JIT shares its front end with) is wherever the CUDA toolkit is, so the text
// is assembled here for the GPU generations gangway expects to meet.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch_compat.hpp"

#include "../../lib/sys/node/process_env.hpp"
#include "../../lib/sys/stages/cuda_kernel.hpp"

namespace {

std::string find_ptxas() {
    if (auto p = gangway::sys::env_or("PTXAS"); !p.empty()) return p;
    for (const char* p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
        if (std::filesystem::exists(p)) return p;
    return "";
}

}  // namespace

TEST_CASE("the computation check's PTX assembles for Ampere, Hopper and Blackwell") {
    const std::string text = gangway::sys::kAxpbPtx;
    CHECK(text.find(std::string(".entry ") + gangway::sys::kAxpbKernel + "(") != std::string::npos);
    const std::string ptxas = find_ptxas();
    if (ptxas.empty()) {
        // CI machines have the toolkit: there its absence is a failure, not a skip.
        if (gangway::sys::env_or("CI") == "true") FAIL("CI=true but no ptxas (/usr/local/cuda/bin/ptxas or PTXAS)");
        WARN("skipped: no ptxas here (CUDA toolkit not in /usr/local/cuda; set PTXAS=path)");
        return;
    }
    const auto dir = std::filesystem::temp_directory_path() / ("gangway-ptx-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "axpb.ptx";
    std::ofstream(file) << text;
    for (const char* arch : {"sm_80", "sm_90", "sm_100"}) {
        INFO(arch);
        const std::string cmd = ptxas + " -arch=" + arch + " -o " + (dir / "axpb.cubin").string() + " " + file.string() +
                                " > " + (dir / "log").string() + " 2>&1";
        const int rc = std::system(cmd.c_str());
        std::ifstream log(dir / "log");
        const std::string out((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
        INFO(out);
        CHECK(rc == 0);
        CHECK(std::filesystem::file_size(dir / "axpb.cubin") > 0);
    }
    std::filesystem::remove_all(dir);
}
