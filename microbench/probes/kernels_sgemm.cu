// SGEMM benchmarks: our implementations (every kernels::kSgemmImpls record: the dispatcher, the 128 x 128
// and 64 x 64 kernels and the Volkov-Demmel baseline) against cuBLAS, same run, same inputs, at every shape. Family
// kernels.sgemm; GFLOP/s on 2mnk (value_*), GB/s on minimal bytes beside it.
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
#include "harness/arch.hpp"
#include "harness/fill.hpp"
#include "harness/measure.hpp"
#include "harness/nvml.hpp"
#include "probes/registry.hpp"

namespace gpuprobe {
namespace {

using kernels::SgemmImpl;
using kernels::Trans;

const ProbeDescriptor& kSgemmDescriptor = declare_family(
    ProbeDescriptor{"kernels.sgemm", Figure::kFlopRate,
                    "one C = alpha op(A) op(B) + beta C (column-major, FP32, alpha = 1, beta = 0) per sample, timed "
                    "with CUDA events; flops = 2mnk; bytes = minimal (A and B read once, C written once)",
                    "", 10, 2}
        .titled("SGEMM: ours vs cuBLAS")
        .with_axes({text_axis("impl", AxisRole::kGroup), text_axis("trans", AxisRole::kGroup),
                    numeric_axis("m", "rows", AxisRole::kFixed), numeric_axis("n", "columns", AxisRole::kX),
                    numeric_axis("k", "inner dimension", AxisRole::kFixed)})
        .with_fields({text_field("l2"), text_field("math_mode"), text_field("nvidia_tf32_override"),
                      numeric_field("cublas_version", "version"), text_field("kernel"), numeric_field("power_w", "W")})
        .computing("FP32"));

// What an entry times: one of our implementations (a kernels::kSgemmImpls record, entry impl
// "ours_<name>") or cuBLAS SGEMM in one math mode.
struct BenchImpl {
  std::string name;                                // the entry's impl component
  const kernels::SgemmImplRecord* ours = nullptr;  // null for cuBLAS
  bool cublas_pedantic = false;
};

std::vector<BenchImpl> bench_impls() {
  std::vector<BenchImpl> impls;
  for (const kernels::SgemmImplRecord& record : kernels::kSgemmImpls)
    impls.push_back({std::string("ours_") + record.name, &record, false});
  impls.push_back({"cublas_pedantic", nullptr, true});
  impls.push_back({"cublas_default", nullptr, false});
  return impls;
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

void sgemm_entry(benchmark::State& state, const BenchImpl& impl, const Shape& s) {
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
  meas.tag("l2", "not flushed (compute-bound)");  // impl, trans, m, n and k come from the entry's name

  if (impl.ours == nullptr) {
    CublasHandle handle;
    const bool pedantic = impl.cublas_pedantic;
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
    const SgemmImpl ours = impl.ours->impl;
    // The kernel that ran: the record itself, or what kAuto chose for this shape on this GPU.
    meas.tag("kernel", kernels::sgemm_choice_name(kernels::sgemm_choice(ours, s.m, s.n, s.k)));
    meas.tag("math_mode", "fp32_ffma");
    meas.time_events([&](cudaStream_t stream) {
      const kernels::Status st = kernels::sgemm(s.ta, s.tb, s.m, s.n, s.k, alpha, A.data(), lda, B.data(), ldb, beta,
                                                C.data(), ldc, stream, ours);
      if (st != kernels::Status::kSuccess)
        throw Error(std::string("sgemm returned ") + kernels::status_text(st));
    });
  }
  // Board power right after the timed samples: NVML's average over its recent window, i.e. over the last
  // samples of this entry (the issue-44 table gives it beside the clock, ours and cuBLAS's).
  if (context().nvml)
    if (const auto mw = context().nvml->power_mw()) meas.param("power_w", *mw * 1e-3);
}

}  // namespace

void register_sgemm_benchmarks() {
  Context& ctx = context();
  std::vector<Shape> shapes;
  if (ctx.options.quick) {
    shapes = {{512, 512, 512}, {1000, 1000, 1000}};
  } else {
    // Every transposition at every size of docs/perf/sgemm.md's targets: under one wave of 128 x 128 tiles
    // (512 to 1024; 1000 has edge tiles), one wave (2048), several (4096 up), and 4097 (edge tiles on every
    // side, leading dimensions that are not a multiple of 4: the 4-byte copy paths).
    const Trans t[2] = {Trans::kNoTrans, Trans::kTrans};
    for (int size : {512, 1000, 1024, 2048, 4096, 4097, 8192, 16384})
      for (Trans ta : t)
        for (Trans tb : t) shapes.push_back({size, size, size, ta, tb});
    shapes.push_back({3000, 5000, 700});  // m != n != k, a thin k
  }
  auto footprint = [](const Shape& s) {
    return 4.0 * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
  };
  // Our kernels run where the device has their instructions and shared memory (harness/arch.hpp).
  std::vector<BenchImpl> impls;
  for (const BenchImpl& impl : bench_impls()) {
    std::string why;
    if (impl.ours && impl.ours->impl != SgemmImpl::kVolkovDemmel)
      why = arch_unavailable(kCpAsyncMbarrier, ctx.device.cc(), ctx.device.code);
    if (impl.ours && why.empty())
      why = smem_budget_unavailable(kernels::sgemm_dynamic_smem_bytes(impl.ours->impl),
                                    ctx.device.smem_per_block_optin_bytes);
    if (why.empty())
      impls.push_back(impl);
    else
      ctx.skip_notes.push_back(std::string(kSgemmDescriptor.family) + ": impl=" + impl.name + " left out on " +
                               ctx.device.name + ": " + why);
  }
  for (const Shape& s : shapes)
    for (const BenchImpl& impl : impls) {
      if (!kernel_footprint_fits(footprint(s))) continue;
      // Two baselines stop at 8192: Volkov-Demmel (its rate is flat from 1024 on; at 16384 one call took
      // 0.6 s, its timing and counter runs 30 s of the main job) and cuBLAS in pedantic math, which
      // shows at every other size that the default cuBLAS figure is plain FP32 (the two agreed within
      // 0.1 % at 16384, and its counter run there took 5 s: FLOP counters patch the SASS).
      const bool baseline = (impl.ours && impl.ours->impl == SgemmImpl::kVolkovDemmel) || impl.cublas_pedantic;
      if (baseline && double(s.m) * s.n * s.k > 8192.0 * 8192 * 8192) continue;
      // The baselines in one transposition but at 4096 (the SC08 design is NN only; pedantic math agreed
      // with the default within 1 % everywhere it ran), kSmall up to 4097 (kAuto runs it only under one
      // 128 x 128 tile per SM: below 1536 x 1408 on 132 SMs; the larger ones show what it would give).
      if (baseline && s.m != 4096 && (s.ta != Trans::kNoTrans || s.tb != Trans::kNoTrans)) continue;
      if (impl.ours && impl.ours->impl == SgemmImpl::kSmall && s.m > 4097) continue;
      const std::string name = entry_name(kSgemmDescriptor, {{"impl", impl.name},
                                                                     {"trans", trans_name(s.ta, s.tb)},
                                                                     {"m", std::to_string(s.m)},
                                                                     {"n", std::to_string(s.n)},
                                                                     {"k", std::to_string(s.k)}});
      register_entry(name, kSgemmDescriptor, [impl, s](benchmark::State& st) { sgemm_entry(st, impl, s); });
    }
}

}  // namespace gpuprobe
