#include "gpuprobe/kernels/gemm_lt.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/check_cublas.hpp"

namespace gpuprobe::kernels {

namespace {

// alpha = 1, beta = 0 in each scale type (host pointer mode, cuBLASLt's default).
constexpr float kOneF = 1.f, kZeroF = 0.f;
constexpr double kOneD = 1.0, kZeroD = 0.0;
constexpr std::int32_t kOneI = 1, kZeroI = 0;
// FP8 scales lie this many floats apart (256 bytes, cudaMalloc's alignment).
constexpr std::size_t kScaleStride = 64;

const void* one_of(cudaDataType_t scale) {
  return scale == CUDA_R_64F ? static_cast<const void*>(&kOneD)
                             : scale == CUDA_R_32I ? static_cast<const void*>(&kOneI) : static_cast<const void*>(&kOneF);
}
const void* zero_of(cudaDataType_t scale) {
  return scale == CUDA_R_64F ? static_cast<const void*>(&kZeroD)
                             : scale == CUDA_R_32I ? static_cast<const void*>(&kZeroI) : static_cast<const void*>(&kZeroF);
}

template <class T>
T algo_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T value{};
  std::size_t written = 0;
  // An attribute this cuBLASLt does not report reads as 0 rather than failing the plan: it only
  // describes the pick.
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof value, &written) != CUBLAS_STATUS_SUCCESS)
    return T{};
  return value;
}

}  // namespace

const GemmLtPrecisionRecord& gemm_lt_record(GemmLtPrecision p) {
  for (const GemmLtPrecisionRecord& r : kGemmLtPrecisions)
    if (r.precision == p) return r;
  throw Error("gemm_lt_record: unknown precision");
}

std::size_t gemm_lt_version() { return cublasLtGetVersion(); }

GemmLt::GemmLt(GemmLtPrecision p, int m, int n, int k, std::size_t workspace_bytes)
    : record_(gemm_lt_record(p)), workspace_(workspace_bytes) {
  if (m <= 0 || n <= 0 || k <= 0) throw Error("GemmLt: m, n and k must be positive");
  cublasLtHandle_t handle = nullptr;
  GP_CUBLAS_CHECK(cublasLtCreate(&handle));
  handle_.reset(handle);

  cublasLtMatmulDesc_t desc = nullptr;
  GP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, record_.compute_type, record_.scale_type));
  desc_.reset(desc);
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  GP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose));
  GP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
  if (p == GemmLtPrecision::kE4M3) {
    // Each scale in its own 256-byte block: with B's scale 4 bytes past A's, cuBLASLt 13.1 on an H200
    // returned candidates from its heuristic and then refused every one of them (and its own pick)
    // with CUBLAS_STATUS_NOT_SUPPORTED; 256 bytes apart, or one scale for both, they ran. Setting the
    // scale modes explicitly changed nothing (lab/experiments/cublaslt_fp8/variants.cu).
    fp8_scales_ = DeviceBuffer<float>(2 * kScaleStride);
    std::vector<float> ones(2 * kScaleStride, 1.f);
    GP_CUDA_CHECK(cudaMemcpy(fp8_scales_.data(), ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice));
    const float* a_scale = fp8_scales_.data();
    const float* b_scale = fp8_scales_.data() + kScaleStride;
    GP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale));
    GP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale));
  }

  cublasLtMatrixLayout_t layout = nullptr;
  GP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, record_.input_type, k, m, k));  // A: k x m, transposed
  a_layout_.reset(layout);
  GP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, record_.input_type, k, n, k));  // B: k x n
  b_layout_.reset(layout);
  GP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, record_.output_type, m, n, m));  // C and D: m x n
  d_layout_.reset(layout);

  cublasLtMatmulPreference_t preference = nullptr;
  GP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  Owned<cublasLtMatmulPreference_t> preference_owner(preference, cublasLtMatmulPreferenceDestroy);
  const std::uint64_t max_workspace = workspace_.bytes();
  GP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                       &max_workspace, sizeof max_workspace));
  constexpr int kRequested = 8;
  cublasLtMatmulHeuristicResult_t results[kRequested] = {};
  const cublasStatus_t found =
      cublasLtMatmulAlgoGetHeuristic(handle, desc, a_layout_.get(), b_layout_.get(), d_layout_.get(), d_layout_.get(),
                                     preference, kRequested, results, &candidates_);
  if (found == CUBLAS_STATUS_NOT_SUPPORTED || (found == CUBLAS_STATUS_SUCCESS && candidates_ <= 0))
    throw GemmLtUnsupported(std::string("cuBLASLt has no algorithm for ") + record_.name + " (" + record_.types +
                            ") TN m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                            " on this GPU");
  GP_CUBLAS_CHECK(found);
  // The first result is the heuristic's pick, what cublasLtMatmul without an algorithm and cuBLAS's
  // own GEMMs would run.
  algo_ = results[0].algo;
  algorithm_workspace_ = results[0].workspaceSize;
  char text[200];
  std::snprintf(text, sizeof text,
                "algo %d, tile id %u, stages id %u, cluster shape id %u, split-k %d, reduction %u, swizzle %u, "
                "waves %.2f",
                algo_attribute<std::int32_t>(algo_, CUBLASLT_ALGO_CONFIG_ID),
                algo_attribute<std::uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_TILE_ID),
                algo_attribute<std::uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                unsigned(algo_attribute<std::uint16_t>(algo_, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)),
                algo_attribute<std::int32_t>(algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                algo_attribute<std::uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
                algo_attribute<std::uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
                double(results[0].wavesCount));
  algorithm_ = text;
}

void GemmLt::run(const void* a, const void* b, void* d, cudaStream_t stream) const {
  // beta = 0: C is not read. D is passed as C so that no second output buffer is needed.
  const cublasStatus_t status =
      cublasLtMatmul(handle_.get(), desc_.get(), one_of(record_.scale_type), a, a_layout_.get(), b, b_layout_.get(),
                     zero_of(record_.scale_type), d, d_layout_.get(), d, d_layout_.get(), &algo_, workspace_.data(),
                     workspace_.bytes(), stream);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED)
    throw GemmLtUnsupported(std::string("cublasLtMatmul refused its heuristic's algorithm (") + algorithm_ + ") for " +
                            record_.name + " (" + record_.types + "): CUBLAS_STATUS_NOT_SUPPORTED");
  GP_CUBLAS_CHECK(status);
}

}  // namespace gpuprobe::kernels
