// The kit's launch-call names, as CUPTI spells them: a version suffix, and
// for per-thread default streams "_ptsz" (kernels) or "_ptds" before it
// ("cudaLaunchKernel_ptsz_v7000"), or after it for some driver calls.
#include "tests/gpu/capture_facts.h"

#include <gtest/gtest.h>

namespace osc::gpukit {
namespace {

TEST(CaptureFacts, LaunchCallsInEveryCuptiSpelling) {
    for (const char* name :
         {"cudaLaunchKernel", "cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000", "cudaLaunchKernelExC_v11060",
          "cudaLaunchKernelExC_ptsz_v11060", "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx_ptsz",
          "cudaGraphLaunch_v10000", "cudaGraphLaunch_ptsz_v10000", "cuGraphLaunch_ptsz"})
        EXPECT_TRUE(isLaunchCall(name)) << name;
    for (const char* name : {"cudaLaunchHostFunc_v10000", "cudaMemcpyAsync_v3020", "cudaLaunchKernel_x",
                             "mycudaLaunchKernel", "cudaLaunchKernel_v7000_v7000_ptsz_ptsz"})
        EXPECT_FALSE(isLaunchCall(name)) << name;
    EXPECT_TRUE(isGraphLaunchCall("cudaGraphLaunch_ptsz_v10000"));
    EXPECT_FALSE(isGraphLaunchCall("cudaLaunchKernel_ptsz_v7000"));
}

}  // namespace
}  // namespace osc::gpukit
