// The latency chains the exec.latency probe times compute exactly the value of their operation
// applied 64 x groups times (a CPU reference, bit for bit where the operation is exactly
// rounded), so no step was dropped, merged or reordered; and the throughput kernel runs on every SM.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gpuprobe/check.hpp"
#include "harness/measure.hpp"
#include "probes/exec_pipeline.hpp"

namespace gpuprobe {
namespace {

float f32(std::uint64_t bits) {
  const auto u = static_cast<std::uint32_t>(bits);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
double f64(std::uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
// Lane `hi` of a packed f16x2 / bf16x2 word, as a double.
double half_lane(std::uint64_t bits, int hi) {
  const auto h = static_cast<std::uint16_t>(bits >> (16 * hi));
  __half_raw raw;
  raw.x = h;
  return __half2float(__half(raw));
}
double bf16_lane(std::uint64_t bits, int hi) {
  const std::uint32_t u = static_cast<std::uint32_t>((bits >> (16 * hi)) & 0xffffu) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// Round to `mantissa_bits` explicit bits, to nearest even (values stay normal in these chains).
double round_to_bits(double v, int mantissa_bits) {
  if (v == 0) return 0;
  const int e = std::ilogb(v);
  const double ulp = std::ldexp(1.0, e - mantissa_bits);
  return std::nearbyint(v / ulp) * ulp;
}

constexpr std::uint64_t kGroups[] = {1, 2};

class ExecPipelineChain : public ::testing::TestWithParam<PipeOp> {};

TEST_P(ExecPipelineChain, ComputesTheChainValue) {
  const PipeOp op = GetParam();
  const ChainOperands c = chain_operands(op);
  for (std::uint64_t groups : kGroups) {
    const ChainRun r = run_latency_chain(op, groups, c);
    ASSERT_EQ(r.final_bits.size(), 32u);
    EXPECT_GT(r.cycles, 0u);
    const int steps = static_cast<int>(groups) * kLatencyUnroll;
    for (int t = 0; t < 32; ++t) {
      const std::uint64_t got = r.final_bits[t];
      SCOPED_TRACE(std::string(pipe_op_info(op).name) + " thread " + std::to_string(t) + " steps " +
                   std::to_string(steps));
      switch (op) {
        case PipeOp::kFAdd: case PipeOp::kFMul: case PipeOp::kFFma: case PipeOp::kFFmaShared: {
          float x = f32(c.start_bits[t]);
          const float a = f32(c.a_bits), b = f32(c.b_bits);
          for (int i = 0; i < steps; ++i)
            x = op == PipeOp::kFAdd ? x + a : op == PipeOp::kFMul ? x * a : std::fmaf(x, a, b);
          EXPECT_EQ(f32(got), x);
          break;
        }
        case PipeOp::kDAdd: case PipeOp::kDFma: {
          double x = f64(c.start_bits[t]);
          const double a = f64(c.a_bits), b = f64(c.b_bits);
          for (int i = 0; i < steps; ++i) x = op == PipeOp::kDAdd ? x + a : std::fma(x, a, b);
          EXPECT_EQ(f64(got), x);
          break;
        }
        case PipeOp::kHFma2: case PipeOp::kBFma2: {
          const bool half = op == PipeOp::kHFma2;
          auto lane = [&](std::uint64_t bits, int hi) { return half ? half_lane(bits, hi) : bf16_lane(bits, hi); };
          for (int hi = 0; hi < 2; ++hi) {
            double x = lane(c.start_bits[t], hi);
            const double a = lane(c.a_bits, hi), b = lane(c.b_bits, hi);
            // a * x + b is exact in double here (11-bit x 11-bit products); one rounding, as fma.
            for (int i = 0; i < steps; ++i) x = round_to_bits(a * x + b, half ? 10 : 7);
            EXPECT_EQ(lane(got, hi), x) << "lane " << hi;
          }
          break;
        }
        case PipeOp::kIAdd: case PipeOp::kIMad: {
          std::uint32_t x = static_cast<std::uint32_t>(c.start_bits[t]);
          const auto a = static_cast<std::uint32_t>(c.a_bits), b = static_cast<std::uint32_t>(c.b_bits);
          for (int i = 0; i < steps; ++i) x = op == PipeOp::kIAdd ? x + a + b : x * a + b;
          EXPECT_EQ(static_cast<std::uint32_t>(got), x);
          break;
        }
        case PipeOp::kRsqrt: case PipeOp::kSin: {
          // Approximate instructions (rsqrt: 2^-22.9 relative, sin: 2^-20.5 absolute) on contracting
          // chains: errors do not grow, so the chain must stay close to the exact iteration.
          double x = f32(c.start_bits[t]);
          for (int i = 0; i < steps; ++i) x = op == PipeOp::kRsqrt ? 1.0 / std::sqrt(x) : std::sin(x);
          EXPECT_NEAR(f32(got), x, op == PipeOp::kRsqrt ? 1e-5 : 2e-5);
          break;
        }
        case PipeOp::kLog2:  // log2 x < x: from 65536 + t the chain leaves (0, inf) within ~7 steps
          EXPECT_TRUE(std::isnan(f32(got)));
          break;
        case PipeOp::kExp2:  // 2^x > x: from -4 - t/8 the chain overflows within ~7 steps
          EXPECT_TRUE(std::isinf(f32(got)) && f32(got) > 0);
          break;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ExecPipelineChain,
                         ::testing::Values(PipeOp::kFAdd, PipeOp::kFMul, PipeOp::kFFma, PipeOp::kDAdd, PipeOp::kDFma,
                                           PipeOp::kHFma2, PipeOp::kBFma2, PipeOp::kIAdd, PipeOp::kIMad,
                                           PipeOp::kRsqrt, PipeOp::kLog2, PipeOp::kSin, PipeOp::kExp2,
                                           PipeOp::kFFmaShared),
                         [](const auto& info) { return std::string(pipe_op_info(info.param).name); });

TEST(ExecPipeline, LatencyIsProportionalToChainLength) {
  // Twice the chain, about twice the cycles: the clocks bracket the chain and not a constant.
  const ChainOperands c = chain_operands(PipeOp::kFFma);
  run_latency_chain(PipeOp::kFFma, 64, c);  // warm
  const double short_chain = static_cast<double>(run_latency_chain(PipeOp::kFFma, 64, c).cycles);
  const double long_chain = static_cast<double>(run_latency_chain(PipeOp::kFFma, 128, c).cycles);
  EXPECT_NEAR(long_chain / short_chain, 2.0, 0.1);
}

TEST(ExecPipeline, ThroughputRunsOnEverySmAndCountsItsWork) {
  const int sms = context().device.sm_count;
  const ThroughputRun r = run_throughput(PipeOp::kFFma, 4, 64, 4096, sms);
  EXPECT_EQ(r.sms_used, sms);  // 2 blocks of 1024 threads fill an SM: they must spread over all
  EXPECT_GT(r.seconds, 0);
  EXPECT_GT(r.clock_mhz, 100);
  EXPECT_LT(r.clock_mhz, 5000);
  EXPECT_EQ(r.thread_ops, 4096.0 * sms * 64 * 32);
  EXPECT_GE(r.resident_blocks_per_sm, 2);
  EXPECT_THROW(run_throughput(PipeOp::kLog2, 1, 1, 64, sms), UsageError);  // not a throughput op
}

}  // namespace
}  // namespace gpuprobe
