// cuBLASLt matrix multiplies on the tensor cores (and DGEMM), the vendor's reference points for the
// tensor roofs: D = A^T B for one data type per record of kGemmLtPrecisions, with the algorithm that
// cuBLASLt's heuristic picks. The benchmark (microbench/probes/kernels_gemm_lt.cu, family
// kernels.gemm_lt) and its GPU test (tests/gpu/gemm_lt_test.cu) run this one class.
//
// Layout: column-major, "TN" for every type: A stored k x m (lda = k) and transposed, B stored k x n
// (ldb = k), D m x n (ldd = m). TN is the only layout cuBLASLt's FP8 kernels accept on sm_90 ("A must
// be transposed and B non-transposed") and the one its IMMA (INT8) kernels take with the regular
// column order (the other, CUBLASLT_ORDER_COL32 tiles, is a pre-Hopper format), so every type runs the
// same problem. alpha = 1, beta = 0: C (D's type and layout) is never read, and D is written once.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/sgemm_descriptor.hpp"  // sgemm_flops: the 2mnk convention, defined once

namespace gpuprobe::kernels {

enum class GemmLtPrecision { kBF16, kF16, kTF32, kE4M3, kS8, kF64 };

// One data type's GEMM: its name (the entries' `precision`), element sizes, the cuBLASLt types, and
// the oldest GPU whose tensor cores run it.
struct GemmLtPrecisionRecord {
  GemmLtPrecision precision;
  const char* name;           // "bf16", "f16", "tf32", "e4m3", "s8", "f64"
  std::size_t input_bytes;    // one element of A and of B
  std::size_t output_bytes;   // one element of D
  cudaDataType_t input_type;  // A and B
  cudaDataType_t output_type; // C and D
  cublasComputeType_t compute_type;
  cudaDataType_t scale_type;  // alpha and beta
  int min_compute_capability; // major * 10 + minor
  const char* types;          // the contract in words (an entry's tag: no ';' or '=')
};

inline constexpr std::array<GemmLtPrecisionRecord, 6> kGemmLtPrecisions{{
    {GemmLtPrecision::kBF16, "bf16", 2, 2, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 80,
     "A and B bf16, D bf16, FP32 accumulate"},
    {GemmLtPrecision::kF16, "f16", 2, 2, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 80,
     "A and B f16, D f16, FP32 accumulate"},
    {GemmLtPrecision::kTF32, "tf32", 4, 4, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 80,
     "A and B f32 (TF32 in the tensor cores), D f32, FP32 accumulate"},
    // D in BF16: cuBLASLt's FP8 kernels on sm_90 write BF16, FP16, FP32 or FP8; BF16 is what an FP8
    // layer's output usually is (and torch._scaled_mm's out_dtype in scripts/dev/gemm_lt_check.py).
    // Scales: device pointers to 1.0 for A and B (as torch._scaled_mm passes them); fast accumulation
    // off, cuBLASLt's default (partial sums promoted to FP32 periodically; torch's use_fast_accum=False).
    {GemmLtPrecision::kE4M3, "e4m3", 1, 2, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 89,
     "A and B fp8 e4m3 (scales 1.0, device pointers), D bf16, FP32 accumulate, fast accumulation off"},
    {GemmLtPrecision::kS8, "s8", 1, 4, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 80,
     "A and B s8, D s32, s32 accumulate"},
    {GemmLtPrecision::kF64, "f64", 8, 8, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, 80,
     "A and B f64, D f64, FP64 accumulate"},
}};

const GemmLtPrecisionRecord& gemm_lt_record(GemmLtPrecision p);

// Descriptor: flops 2mnk (integer multiply-adds count alike: the tensor roofs' "ops"), and minimal
// bytes: A (mk) and B (kn) read once in their type, D (mn) written once in its type; C is not read
// (beta = 0).
inline double gemm_lt_flops(int m, int n, int k) { return sgemm_flops(m, n, k); }
inline double gemm_lt_min_bytes(GemmLtPrecision p, int m, int n, int k) {
  const GemmLtPrecisionRecord& r = gemm_lt_record(p);
  return (static_cast<double>(m) * k + static_cast<double>(k) * n) * static_cast<double>(r.input_bytes) +
         static_cast<double>(m) * n * static_cast<double>(r.output_bytes);
}

// Workspace offered to the heuristic: cuBLAS's own default on Hopper is 32 MiB; more lets it pick
// split-K or stream-K variants where they pay.
constexpr std::size_t kGemmLtWorkspaceBytes = std::size_t(64) << 20;

// What GemmLt throws when cuBLASLt has no algorithm for the problem on this GPU (the heuristic
// answers CUBLAS_STATUS_NOT_SUPPORTED or returns none, or cublasLtMatmul refuses the algorithm it
// gave); the message names the type and shape.
class GemmLtUnsupported : public Error {
 public:
  using Error::Error;
};

// One plan: handle, descriptors, the heuristic's first algorithm and its workspace. Throws
// GemmLtUnsupported as above and CublasError (GP_CUBLAS_CHECK) on any other cuBLASLt failure.
class GemmLt {
 public:
  GemmLt(GemmLtPrecision p, int m, int n, int k, std::size_t workspace_bytes = kGemmLtWorkspaceBytes);
  GemmLt(const GemmLt&) = delete;
  GemmLt& operator=(const GemmLt&) = delete;

  // D = A^T B on `stream` (A: k x m, B: k x n, D: m x n, all column-major with the leading
  // dimensions above, in the record's types).
  void run(const void* a, const void* b, void* d, cudaStream_t stream) const;

  const GemmLtPrecisionRecord& record() const { return record_; }
  // The algorithm the heuristic picked, from its configuration attributes, e.g. "algo 66, tile id 23,
  // stages id 0, cluster shape id 0, split-k 1, reduction 0, swizzle 0, waves 0.97" (ids are the
  // enums of cublasLt.h: cublasLtMatmulTile_t, cublasLtMatmulStages_t, cublasLtClusterShape_t).
  const std::string& algorithm() const { return algorithm_; }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }  // offered to the heuristic
  std::size_t algorithm_workspace_bytes() const { return algorithm_workspace_; }  // what the pick needs
  int heuristic_candidates() const { return candidates_; }  // algorithms the heuristic returned (<= 8)

 private:
  // cuBLASLt objects, destroyed with the plan (also when its constructor throws half-way).
  template <class Handle>
  using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, cublasStatus_t (*)(Handle)>;

  GemmLtPrecisionRecord record_;
  Owned<cublasLtHandle_t> handle_{nullptr, cublasLtDestroy};
  Owned<cublasLtMatmulDesc_t> desc_{nullptr, cublasLtMatmulDescDestroy};
  Owned<cublasLtMatrixLayout_t> a_layout_{nullptr, cublasLtMatrixLayoutDestroy};
  Owned<cublasLtMatrixLayout_t> b_layout_{nullptr, cublasLtMatrixLayoutDestroy};
  Owned<cublasLtMatrixLayout_t> d_layout_{nullptr, cublasLtMatrixLayoutDestroy};
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer<unsigned char> workspace_;
  DeviceBuffer<float> fp8_scales_;  // A's and B's scale (1.0) for FP8, 256 bytes apart
  std::size_t algorithm_workspace_ = 0;
  int candidates_ = 0;
  std::string algorithm_;
};

// cuBLASLt's version (cublasLtGetVersion), e.g. 130000 + ...
std::size_t gemm_lt_version();

}  // namespace gpuprobe::kernels
