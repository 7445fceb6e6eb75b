// SGEMM benchmarks: our kernels (Volkov-Demmel baseline, tuned sm_90 tilings) against cuBLAS, same
// run, same inputs. Family kernels.sgemm; GFLOP/s on 2mnk (value_*), GB/s on minimal bytes beside it.
//
// cuBLAS is timed in two math modes, recorded in the math_mode tag: CUBLAS_PEDANTIC_MATH (plain FP32,
// no TF32, the like-for-like baseline of our FFMA kernels) and CUBLAS_DEFAULT_MATH (cublasSgemm
// does not use TF32 in it either unless NVIDIA_TF32_OVERRIDE says so; the tag records that variable).
// GEMM at these sizes is compute-bound (2mnk flops over 4(mk + kn + mn) bytes is over 85 flop/byte
// from m = n = k = 512), so the L2 is not flushed between samples; the l2 tag says so.
#include <cublas_v2.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gpuprobe/check_cublas.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "gpuprobe/kernels/sgemm.hpp"
#include "gpuprobe/kernels/sgemm_descriptor.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "probes/registry.hpp"

namespace gpuprobe {
namespace {

using kernels::SgemmImpl;
using kernels::Trans;

const ProbeDescriptor kSgemmDescriptor{
    "kernels.sgemm", Figure::kFlopRate,
    "one C = alpha op(A) op(B) + beta C (column-major, FP32, alpha = 1, beta = 0) per sample, timed with "
    "CUDA events; flops = 2mnk; bytes = minimal (A and B read once, C written once)",
    "", 10, 2};

enum class Impl {
  kOursVd,
  kOursTuned,
  kOursTuned128x256,
  kOursTuned128x128w64x64,
  kOursTunedKRegister,
  kOursTunedK16,
  kOursTunedStages4,
  kOursTunedPlainRaster,
  kOursTunedMbarrier,
  kOursTunedMbarrierSerpentine,
  kOursTunedCopiesAtTileStart,
  kOursTunedSplitCopies,
  kCublasPedantic,
  kCublasDefault
};

struct ImplInfo {
  Impl impl;
  const char* name;
};
constexpr ImplInfo kImpls[] = {
    {Impl::kOursVd, "ours_vd"},
    {Impl::kOursTuned, "ours_tuned"},
    {Impl::kOursTuned128x256, "ours_tuned_128x256_w64x64"},
    {Impl::kOursTuned128x128w64x64, "ours_tuned_128x128_w64x64"},
    {Impl::kOursTunedKRegister, "ours_tuned_kregister"},
    {Impl::kOursTunedK16, "ours_tuned_128x128_w64x32"},
    {Impl::kOursTunedStages4, "ours_tuned_4stages"},
    {Impl::kOursTunedPlainRaster, "ours_tuned_plain_raster"},  // ours_tuned without grouped rasterization
    {Impl::kOursTunedMbarrier, "ours_tuned_mbarrier"},         // ours_tuned with per-stage mbarriers
    {Impl::kOursTunedMbarrierSerpentine, "ours_tuned_mbarrier_serpentine"},
    {Impl::kOursTunedCopiesAtTileStart, "ours_tuned_copies_at_tile_start"},  // v8-v11's default (ours_tuned before v12)
    {Impl::kOursTunedSplitCopies, "ours_tuned_split_copies"},                      // v11
    {Impl::kCublasPedantic, "cublas_pedantic"},
    {Impl::kCublasDefault, "cublas_default"},
};

SgemmImpl our_impl(Impl impl) {
  switch (impl) {
    case Impl::kOursVd: return SgemmImpl::kVolkovDemmel;
    case Impl::kOursTuned128x256: return SgemmImpl::kTuned128x256w64x64;
    case Impl::kOursTuned128x128w64x64: return SgemmImpl::kTuned128x128w64x64;
    case Impl::kOursTunedKRegister: return SgemmImpl::kTuned128x128w64x32KRegister;
    case Impl::kOursTunedK16: return SgemmImpl::kTuned128x128w64x32;
    case Impl::kOursTunedStages4: return SgemmImpl::kTuned128x128w64x32Stages4;
    case Impl::kOursTunedPlainRaster: return SgemmImpl::kTuned128x128x32w64x32;
    case Impl::kOursTunedMbarrier: return SgemmImpl::kTuned128x128x32w64x32Mbarrier;
    case Impl::kOursTunedMbarrierSerpentine: return SgemmImpl::kTuned128x128x32w64x32MbarrierSerpentine;
    case Impl::kOursTunedCopiesAtTileStart: return SgemmImpl::kTuned128x128x32w64x32Swizzle;
    case Impl::kOursTunedSplitCopies: return SgemmImpl::kTuned128x128x32w64x32SplitCopies;
    default: return SgemmImpl::kTuned;
  }
}

cublasOperation_t to_cublas(Trans t) { return t == Trans::kNoTrans ? CUBLAS_OP_N : CUBLAS_OP_T; }
const char* trans_name(Trans ta, Trans tb) {
  if (ta == Trans::kNoTrans) return tb == Trans::kNoTrans ? "nn" : "nt";
  return tb == Trans::kNoTrans ? "tn" : "tt";
}

struct Shape {
  int m, n, k;
  Trans ta = Trans::kNoTrans, tb = Trans::kNoTrans;
};

void sgemm_entry(benchmark::State& state, Impl impl, const char* impl_name, const Shape& s) {
  const int lda = s.ta == Trans::kNoTrans ? s.m : s.k;
  const int ldb = s.tb == Trans::kNoTrans ? s.k : s.n;
  const int ldc = s.m;
  const std::size_t a_count = std::size_t(lda) * (s.ta == Trans::kNoTrans ? s.k : s.m);
  const std::size_t b_count = std::size_t(ldb) * (s.tb == Trans::kNoTrans ? s.n : s.k);
  const std::size_t c_count = std::size_t(ldc) * s.n;
  DeviceBuffer<float> A(a_count), B(b_count), C(c_count);
  fill_uniform(A.data(), a_count, 101, -1.f, 1.f);
  fill_uniform(B.data(), b_count, 202, -1.f, 1.f);
  fill_uniform(C.data(), c_count, 303, -1.f, 1.f);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  const float alpha = 1.f, beta = 0.f;

  Measurement meas(state, kSgemmDescriptor,
                   Work{kernels::sgemm_min_bytes(s.m, s.n, s.k, beta != 0.f), kernels::sgemm_flops(s.m, s.n, s.k), 0});
  meas.param("m", s.m);
  meas.param("n", s.n);
  meas.param("k", s.k);
  meas.tag("impl", impl_name);
  meas.tag("trans", trans_name(s.ta, s.tb));
  meas.tag("l2", "not flushed (compute-bound)");

  if (impl == Impl::kCublasPedantic || impl == Impl::kCublasDefault) {
    CublasHandle handle;
    const bool pedantic = impl == Impl::kCublasPedantic;
    GP_CUBLAS_CHECK(cublasSetMathMode(handle.get(), pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));
    meas.tag("math_mode", pedantic ? "CUBLAS_PEDANTIC_MATH" : "CUBLAS_DEFAULT_MATH");
    const char* tf32_override = std::getenv("NVIDIA_TF32_OVERRIDE");
    meas.tag("nvidia_tf32_override", tf32_override ? tf32_override : "unset");
    int version = 0;
    GP_CUBLAS_CHECK(cublasGetVersion(handle.get(), &version));
    meas.param("cublas_version", version);
    meas.time_events([&](cudaStream_t stream) {
      GP_CUBLAS_CHECK(cublasSetStream(handle.get(), stream));
      GP_CUBLAS_CHECK(cublasSgemm(handle.get(), to_cublas(s.ta), to_cublas(s.tb), s.m, s.n, s.k, &alpha, A.data(),
                                  lda, B.data(), ldb, &beta, C.data(), ldc));
    });
  } else {
    const SgemmImpl ours = our_impl(impl);
    meas.tag("kernel", kernels::sgemm_impl_name(ours));
    meas.tag("math_mode", "fp32_ffma");
    meas.time_events([&](cudaStream_t stream) {
      const kernels::Status st = kernels::sgemm(s.ta, s.tb, s.m, s.n, s.k, alpha, A.data(), lda, B.data(), ldb, beta,
                                                C.data(), ldc, stream, ours);
      if (st != kernels::Status::kSuccess)
        throw Error(std::string("sgemm returned ") + kernels::status_text(st));
    });
  }
}

}  // namespace

void register_sgemm_benchmarks() {
  const Context& ctx = context();
  std::vector<Shape> shapes;
  std::vector<Shape> tuning_shapes;  // where the alternative tilings are timed too
  if (ctx.options.quick) {
    shapes = {{512, 512, 512}, {1000, 1000, 1000}};
  } else {
    for (int size : {512, 1024, 2048, 4096, 8192, 16384}) shapes.push_back({size, size, size});
    // Irregular shapes: edge tiles on every side, a non-multiple of 4 leading dimension, a thin k.
    shapes.push_back({1000, 1000, 1000});
    shapes.push_back({4097, 4097, 4097});
    shapes.push_back({3000, 5000, 700});
    // All transpositions at one large size; NT (both operands MN-contiguous) at the issue's sizes.
    for (int size : {4096, 8192, 16384}) shapes.push_back({size, size, size, Trans::kNoTrans, Trans::kTrans});
    shapes.push_back({4096, 4096, 4096, Trans::kTrans, Trans::kNoTrans});
    shapes.push_back({4096, 4096, 4096, Trans::kTrans, Trans::kTrans});
    tuning_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {16384, 16384, 16384}};
  }
  auto footprint = [](const Shape& s) {
    return 4.0 * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
  };
  auto add = [&](const Shape& s, const ImplInfo& info) {
    if (!kernel_footprint_fits(footprint(s))) return;
    const std::string name = entry_name(kSgemmDescriptor.family, {{"impl", info.name},
                                                                   {"trans", trans_name(s.ta, s.tb)},
                                                                   {"m", std::to_string(s.m)},
                                                                   {"n", std::to_string(s.n)},
                                                                   {"k", std::to_string(s.k)}});
    register_entry(name, kSgemmDescriptor,
                   [info, s](benchmark::State& st) { sgemm_entry(st, info.impl, info.name, s); });
  };
  // Every shape runs the V&D baseline, the default and cuBLAS; the other tilings and variants of the
  // tuned kernel (the tuning record) run at the tuning shapes only.
  auto tuning_only = [](Impl impl) {
    return impl != Impl::kOursVd && impl != Impl::kOursTuned && impl != Impl::kCublasPedantic &&
           impl != Impl::kCublasDefault;
  };
  for (const Shape& s : shapes)
    for (const ImplInfo& info : kImpls)
      if (!tuning_only(info.impl)) add(s, info);
  for (const Shape& s : tuning_shapes)
    for (const ImplInfo& info : kImpls)
      if (tuning_only(info.impl)) add(s, info);
}

}  // namespace gpuprobe
