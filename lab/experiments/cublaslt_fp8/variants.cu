// Which cuBLASLt FP8 (e4m3) GEMM configurations run on this GPU, and which heuristic candidates
// cublasLtMatmul accepts: the diagnosis behind kernels.gemm_lt's FP8 entry (gemm_lt.hpp). A standalone
// program, built by hand on the GPU machine:
//   nvcc -O2 -std=c++17 -arch=native variants.cu -lcublasLt -o variants && ./variants [n]
// For each variant: the heuristic's status and candidate count, then for every candidate the status
// of one cublasLtMatmul and, where it ran, the median of 5 timed calls.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                    \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

struct Variant {
  const char* what;
  cudaDataType_t c_type, d_type;
  bool c_is_d;        // pass D as C (else C = nullptr)
  bool scales;        // A and B scale pointers set
  bool d_scale;       // D scale pointer set (fp8 D)
  cublasOperation_t ta, tb;
  int b_scale_offset = 1;   // B's scale, in floats past A's (1: 4 bytes; 64: 256 bytes; 0: the same)
  bool scale_mode = false;  // A and B scale modes set explicitly to scalar FP32 (cuBLASLt's default)
};

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8192;
  const std::size_t nn = std::size_t(n) * n;
  void *a, *b, *d, *ws;
  float* scales;
  const std::size_t ws_bytes = std::size_t(64) << 20;
  CK(cudaMalloc(&a, nn));
  CK(cudaMalloc(&b, nn));
  CK(cudaMalloc(&d, nn * 4));
  CK(cudaMalloc(&ws, ws_bytes));
  CK(cudaMalloc(&scales, 256 * sizeof(float)));
  CK(cudaMemset(a, 0x38, nn));  // e4m3 0x38 = 1.0
  CK(cudaMemset(b, 0x38, nn));
  float ones[256];
  for (float& o : ones) o = 1.f;
  CK(cudaMemcpy(scales, ones, sizeof ones, cudaMemcpyHostToDevice));
  cublasLtHandle_t h;
  cublasLtCreate(&h);
  std::printf("cuBLASLt %zu, n = %d\n", cublasLtGetVersion(), n);
  const Variant variants[] = {
      {"ours: C,D bf16, C=nullptr, A/B scales, TN", CUDA_R_16BF, CUDA_R_16BF, false, true, false, CUBLAS_OP_T, CUBLAS_OP_N},
      {"C,D bf16, C=D, A/B scales, TN", CUDA_R_16BF, CUDA_R_16BF, true, true, false, CUBLAS_OP_T, CUBLAS_OP_N},
      {"C,D bf16, C=D, no scales, TN", CUDA_R_16BF, CUDA_R_16BF, true, false, false, CUBLAS_OP_T, CUBLAS_OP_N},
      {"C,D f16, C=D, A/B scales, TN", CUDA_R_16F, CUDA_R_16F, true, true, false, CUBLAS_OP_T, CUBLAS_OP_N},
      {"C,D f32, C=D, A/B scales, TN", CUDA_R_32F, CUDA_R_32F, true, true, false, CUBLAS_OP_T, CUBLAS_OP_N},
      {"C bf16, D e4m3, A/B/D scales, TN", CUDA_R_16BF, CUDA_R_8F_E4M3, false, true, true, CUBLAS_OP_T, CUBLAS_OP_N},
      {"ours, B's scale 256 B past A's", CUDA_R_16BF, CUDA_R_16BF, false, true, false, CUBLAS_OP_T, CUBLAS_OP_N, 64},
      {"ours, one scale for A and B", CUDA_R_16BF, CUDA_R_16BF, false, true, false, CUBLAS_OP_T, CUBLAS_OP_N, 0},
      {"ours, scale modes set (B's scale 4 B past A's)", CUDA_R_16BF, CUDA_R_16BF, false, true, false, CUBLAS_OP_T,
       CUBLAS_OP_N, 1, true},
      {"ours, scale modes set, B's scale 256 B past A's", CUDA_R_16BF, CUDA_R_16BF, false, true, false, CUBLAS_OP_T,
       CUBLAS_OP_N, 64, true},
      {"C=D, scale modes set, B's scale 256 B past A's", CUDA_R_16BF, CUDA_R_16BF, true, true, false, CUBLAS_OP_T,
       CUBLAS_OP_N, 64, true},
  };
  for (const Variant& v : variants) {
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &v.ta, sizeof v.ta);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &v.tb, sizeof v.tb);
    const float* sa = scales;
    const float* sb = scales + v.b_scale_offset;
    const float* sd = scales + 128;
    if (v.scales) {
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa);
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb);
    }
    if (v.scale_mode) {
      const cublasLtMatmulMatrixScale_t scalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &scalar, sizeof scalar);
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &scalar, sizeof scalar);
    }
    if (v.d_scale) cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &sd, sizeof sd);
    cublasLtMatrixLayout_t la, lb, lc, ld;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n);
    cublasLtMatrixLayoutCreate(&lc, v.c_type, n, n, n);
    cublasLtMatrixLayoutCreate(&ld, v.d_type, n, n, n);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    const std::uint64_t wsb = ws_bytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
    cublasLtMatmulHeuristicResult_t res[16] = {};
    int got = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, lc, ld, pref, 16, res, &got);
    std::printf("\n%s\n  heuristic: status %d, %d candidates\n", v.what, int(hs), got);
    const float alpha = 1, beta = 0;
    // The C pointer: D itself, or none. Beta = 0 either way.
    for (int i = 0; i < got; ++i) {
      const void* c = v.c_is_d ? d : nullptr;
      if (v.d_type != v.c_type) c = nullptr;
      cublasStatus_t s = cublasLtMatmul(h, desc, &alpha, a, la, b, lb, &beta, c, lc, d, ld, &res[i].algo, ws,
                                        ws_bytes, nullptr);
      cudaError_t ce = cudaDeviceSynchronize();
      std::printf("  candidate %d (workspace %zu): matmul status %d, cuda %s", i, res[i].workspaceSize, int(s),
                  cudaGetErrorString(ce));
      if (s == CUBLAS_STATUS_SUCCESS && ce == cudaSuccess) {
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        std::vector<float> ms;
        for (int r = 0; r < 5; ++r) {
          cudaEventRecord(e0);
          cublasLtMatmul(h, desc, &alpha, a, la, b, lb, &beta, c, lc, d, ld, &res[i].algo, ws, ws_bytes, nullptr);
          cudaEventRecord(e1);
          cudaEventSynchronize(e1);
          float t;
          cudaEventElapsedTime(&t, e0, e1);
          ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        std::printf(", %.3f ms, %.1f TFLOP/s", ms[2], 2.0 * n * double(n) * n / (ms[2] * 1e-3) / 1e12);
      }
      std::printf("\n");
    }
    // No algorithm given: cuBLASLt picks one itself.
    const void* c0 = (v.c_is_d && v.d_type == v.c_type) ? d : nullptr;
    const cublasStatus_t s0 =
        cublasLtMatmul(h, desc, &alpha, a, la, b, lb, &beta, c0, lc, d, ld, nullptr, ws, ws_bytes, nullptr);
    std::printf("  algo = nullptr: matmul status %d, cuda %s\n", int(s0), cudaGetErrorString(cudaDeviceSynchronize()));
  }
  return 0;
}
