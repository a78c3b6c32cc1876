#include "cuda_kernel.hpp"

namespace gangway::sys {

// PTX ISA 7.0 (CUDA 11.0 drivers and newer), target sm_70: the driver JIT
// compiles it for the GPU at hand, newer generations included.
const char kAxpbPtx[] = R"PTX(
.version 7.0
.target sm_70
.address_size 64

.visible .entry gangway_axpb(
    .param .u64 p_x,
    .param .u32 p_n,
    .param .f32 p_a,
    .param .f32 p_b
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [p_x];
    ld.param.u32 %r1, [p_n];
    ld.param.f32 %f1, [p_a];
    ld.param.f32 %f2, [p_b];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    cvt.rn.f32.u32 %f3, %r5;
    fma.rn.f32 %f4, %f3, %f1, %f2;
    st.global.f32 [%rd4], %f4;
DONE:
    ret;
}
)PTX";

}  // namespace gangway::sys
