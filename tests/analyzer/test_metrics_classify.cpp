// Kernel classification and NCCL kernel-name parsing (docs/design.md section 3).
#include "analyzer/metrics/classify.h"
#include "analyzer/metrics/comm_kernel_families.h"

#include <gtest/gtest.h>

namespace osc {
namespace {

struct NameCase {
    const char* name;
    const char* collective;
    const char* datatype;
};

TEST(NcclKernelName, ParsesBothNamingSchemes) {
    const NameCase cases[] = {
        // NCCL >= 2.19
        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "AllReduce", "f32"},
        {"void ncclDevKernel_AllReduce_Sum_bf16_TREE_LL(ncclDevKernelArgs4K)", "AllReduce", "bf16"},
        {"ncclDevKernel_ReduceScatter_Sum_u32_RING_LL", "ReduceScatter", "u32"},
        {"ncclDevKernel_Reduce_Sum_f8e4m3_RING_LL", "Reduce", "f8e4m3"},
        {"ncclDevKernel_AllGather_RING_LL", "AllGather", ""},
        {"ncclDevKernel_Broadcast_RING_LL", "Broadcast", ""},
        {"void ncclDevKernel_SendRecv(ncclDevKernelArgs4K)", "SendRecv", ""},
        {"ncclDevKernel_Generic", "", ""},
        {"ncclDevKernel_Generic_4", "", ""},
        // symmetric kernels (2.27 and 2.28+)
        {"ncclSymDevKernel_AllReduce_AGxLL_R_sum_f32", "AllReduce", "f32"},
        {"void ncclSymkDevKernel_ReduceScatter_LDMC_sum_bf16(ncclSymkDevWorkArgs4K)", "ReduceScatter", "bf16"},
        {"ncclSymkDevKernel_AllGather_LL", "AllGather", ""},
        // NCCL <= 2.18: C type names at the end
        {"ncclKernel_AllReduce_RING_LL_Sum_float", "AllReduce", "f32"},
        {"ncclKernel_AllReduce_RING_LL_Sum_half(ncclDevComm*, unsigned long, ncclWork*)", "AllReduce", "f16"},
        {"void ncclKernel_ReduceScatter_RING_LL_Sum___nv_bfloat16(ncclDevComm*, unsigned long, ncclWork*)",
         "ReduceScatter", "bf16"},
        {"ncclKernel_AllReduce_TREE_LL_Sum_double", "AllReduce", "f64"},
        {"ncclKernel_AllReduce_RING_LL_Sum_uint8_t", "AllReduce", "u8"},
        {"ncclKernel_AllReduce_RING_LL_Sum_int8_t", "AllReduce", "i8"},
        {"ncclKernel_Reduce_RING_LL_Sum_int64_t", "Reduce", "i64"},
        {"ncclKernel_AllReduce_RING_LL_Sum___nv_fp8_e5m2", "AllReduce", "f8e5m2"},
        {"ncclKernel_AllGather_RING_LL_Sum_int8_t", "AllGather", ""},
        {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "SendRecv", ""},
    };
    for (const auto& c : cases) {
        const NcclKernelName n = parseNcclKernelName(c.name);
        EXPECT_TRUE(n.isNccl) << c.name;
        EXPECT_EQ(n.collective, c.collective) << c.name;
        EXPECT_EQ(n.datatype, c.datatype) << c.name;
    }
    EXPECT_FALSE(parseNcclKernelName("ampere_sgemm_128x64_nn").isNccl);
    EXPECT_FALSE(parseNcclKernelName("void my_ncclKernel_like(int)").isNccl);
    EXPECT_TRUE(parseNcclKernelName("ncclSomethingNew").isNccl);
    EXPECT_EQ(parseNcclKernelName("ncclSomethingNew").collective, "");
}

TEST(ActivityClassifier, BuiltInRuleAndUserPatterns) {
    StringTable s;
    const auto nccl = s.intern("void ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)");
    const auto gemm = s.intern("ampere_bf16_s16816gemm");
    const auto trt = s.intern("void tensorrt_llm::kernels::allreduce_fusion_kernel_oneshot_lamport<bf16>()");
    const auto deep = s.intern("void deep_ep::intranode::dispatch<8>(int)");
    const auto inner = s.intern("fused_ncclKernel_wrapper");  // no leading nccl: compute
    AnalysisSettings settings;
    {
        ActivityClassifier c(s, settings);
        EXPECT_EQ(c.kernel(nccl), Category::Communication);
        EXPECT_EQ(c.kernel(gemm), Category::Compute);
        EXPECT_EQ(c.kernel(trt), Category::Compute);
        EXPECT_EQ(c.kernel(inner), Category::Compute);
        EXPECT_EQ(c.kernel(kNoId), Category::Compute);
    }
    settings.commKernelPatterns = {"allreduce_fusion", "^void deep_ep::"};
    ActivityClassifier c(s, settings);
    EXPECT_EQ(c.kernel(trt), Category::Communication);  // searched, not anchored
    EXPECT_EQ(c.kernel(deep), Category::Communication);
    EXPECT_EQ(c.kernel(gemm), Category::Compute);
    // An id interned after the classifier was built is still classified.
    const auto later = s.intern("ncclKernel_AllGather_RING_LL_Sum_int8_t");
    EXPECT_EQ(c.kernel(later), Category::Communication);
    EXPECT_EQ(c.ncclName(later).collective, "AllGather");
}

// Issue 28 item 5: the examples of docs/metrics.md section 2's table of
// libraries are communication without any pattern; their lookalikes are not.
TEST(ActivityClassifier, CommunicationLibrariesByDefault) {
    const std::pair<const char*, const char*> communication[] = {
        {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "NCCL, RCCL"},
        {"ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "NCCL, RCCL"},
        {"mscclKernel_Sum_float_LL", "MSCCL"},
        {"void mscclpp::executionKernel<__half>(int, __half*)", "MSCCL++"},
        {"void deep_ep::intranode::dispatch<8>(int)", "DeepEP"},
        {"void dpsk::ep::internode::combine<false, 8>(int)", "DeepEP"},
        {"void dpsk::ep::internode::notify_dispatch<false, 4>(int const*)", "DeepEP"},
        {"void deep_ep::internode_ll::dispatch<true>(void*)", "DeepEP"},
        {"broadcast32_on_stream_kernel", "NVSHMEM, rocSHMEM"},
        {"void nvshmemi_proxy_quiet_kernel()", "NVSHMEM, rocSHMEM"},
        {"userbuffers_fp16_sum_inplace_gpu_rw(int, int*)", "Transformer Engine userbuffers"},
        {"void kuserbuffers_pushsend(int*)", "Transformer Engine userbuffers"},
        {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)",
         "PyTorch symmetric memory"},
        {"void (anonymous namespace)::two_shot_all_reduce_kernel_inplace<c10::BFloat16, 16, 2>(c10::BFloat16**)",
         "PyTorch symmetric memory"},
        {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(int)", "vLLM custom all-reduce"},
    };
    const char* compute[] = {
        "void deep_ep::layout::get_dispatch_layout(long const*)",
        "void dpsk::ep::cuda::get_dispatch_layout(long const*)",
        "void cdpsk::ep::CUB_101_internode::DeviceScanKernel()",  // namespace ending in dpsk::ep
        "ampere_bf16_s16816gemm",
        "fused_ncclKernel_wrapper",
    };
    StringTable s;
    AnalysisSettings settings;
    ActivityClassifier c(s, settings);
    for (const auto& [name, family] : communication) {
        EXPECT_EQ(c.kernel(s.intern(name)), Category::Communication) << name;
        const CommKernelFamily* f = communicationFamily(name);
        ASSERT_NE(f, nullptr) << name;
        EXPECT_EQ(f->family, family) << name;
    }
    for (const char* name : compute) {
        EXPECT_EQ(c.kernel(s.intern(name)), Category::Compute) << name;
        EXPECT_EQ(communicationFamily(name), nullptr) << name;
    }
}

TEST(ActivityClassifier, CopiesAndMemsets) {
    StringTable s;
    AnalysisSettings settings;
    ActivityClassifier plain(s, settings);
    EXPECT_EQ(plain.copy(CopyKind::PtoP), Category::Communication);
    EXPECT_EQ(plain.copy(CopyKind::HtoD), Category::Memory);
    EXPECT_EQ(plain.copy(CopyKind::DtoH), Category::Memory);
    EXPECT_EQ(plain.copy(CopyKind::DtoD), Category::Memory);
    EXPECT_EQ(ActivityClassifier::memset(), Category::Memory);
    settings.commCopies = true;
    ActivityClassifier offload(s, settings);
    EXPECT_EQ(offload.copy(CopyKind::HtoD), Category::Communication);
    EXPECT_EQ(offload.copy(CopyKind::DtoH), Category::Communication);
    EXPECT_EQ(offload.copy(CopyKind::DtoD), Category::Memory);
    EXPECT_EQ(offload.copy(CopyKind::HtoH), Category::Memory);
}

TEST(ActivityClassifier, InvalidPatternNamesIt) {
    StringTable s;
    AnalysisSettings settings;
    settings.commKernelPatterns = {"allreduce(["};
    try {
        ActivityClassifier c(s, settings);
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("--comm-kernel"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("allreduce(["), std::string::npos);
    }
}

}  // namespace
}  // namespace osc
