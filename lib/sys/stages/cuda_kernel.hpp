// The cuda stage's computation with a known result, as PTX text that the
// driver compiles for whatever GPU it finds (cuModuleLoadData): no nvcc at
// build time, and one text for every GPU generation since Volta.
//
//   gangway_axpb(float* x, unsigned n, float a, float b): x[i] = i * a + b
//
// Every element is exact in float for i < 2^23 with a = 2, b = 1, so the host
// checks each one: a wrong value means a fault in the SMs or in memory that a
// copy alone (which only the copy engines do) would not show.
// tests/unit/cuda_kernel_test.cpp assembles it with ptxas where there is one.
#pragma once

namespace gangway::sys {

inline constexpr const char* kAxpbKernel = "gangway_axpb";
extern const char kAxpbPtx[];

}  // namespace gangway::sys
