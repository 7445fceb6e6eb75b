// Parameter validation of the execution and transfer probes, and the peer-to-peer skip path:
// everything decided on the host before a kernel runs, so it is checked without a GPU.
#include <gtest/gtest.h>

#include <set>

#include "gpuprobe/check.hpp"
#include "probes/exec_barrier.hpp"
#include "probes/exec_pipeline.hpp"
#include "probes/transfer_p2p.hpp"
#include "probes/transfer_plan.hpp"

namespace gpuprobe {
namespace {

TEST(ExecParams, ThroughputShapeCoversOneToSixtyFourWarps) {
  for (int w = 1; w <= 32; ++w) {
    const ThroughputShape s = throughput_shape(w);
    EXPECT_EQ(s.blocks_per_sm, 1);
    EXPECT_EQ(s.threads_per_block, 32 * w);
  }
  for (int w = 34; w <= 64; w += 2) {
    const ThroughputShape s = throughput_shape(w);
    EXPECT_EQ(s.blocks_per_sm, 2);
    EXPECT_EQ(s.blocks_per_sm * s.threads_per_block, 32 * w);
    EXPECT_LE(s.threads_per_block, 1024);
  }
}

TEST(ExecParams, ThroughputShapeRejectsImpossibleCounts) {
  EXPECT_THROW(throughput_shape(0), UsageError);
  EXPECT_THROW(throughput_shape(-3), UsageError);
  EXPECT_THROW(throughput_shape(65), UsageError);
  EXPECT_THROW(throughput_shape(33), UsageError);  // odd above 32: not two equal blocks
}

TEST(ExecParams, IlpRange) {
  for (int i = 1; i <= kMaxIlp; ++i) EXPECT_NO_THROW(validate_ilp(i));
  EXPECT_THROW(validate_ilp(0), UsageError);
  EXPECT_THROW(validate_ilp(kMaxIlp + 1), UsageError);
}

TEST(ExecParams, OperationNamesRoundTripAndAreUnique) {
  std::set<std::string> names, kernels;
  for (const PipeOpInfo& op : pipe_ops()) {
    EXPECT_EQ(pipe_op_from_name(op.name), op.op);
    EXPECT_EQ(std::string(op.kernel_name), std::string("gp_latency_") + op.name);  // check_sass.sh relies on it
    names.insert(op.name);
    kernels.insert(op.kernel_name);
  }
  EXPECT_EQ(names.size(), pipe_ops().size());
  EXPECT_EQ(kernels.size(), pipe_ops().size());
  EXPECT_THROW(pipe_op_from_name("fma"), UsageError);
}

TEST(ExecParams, TheoreticalPeaksForRooflineCeilings) {
  // H100 (9.0): 128 FP32 and 64 FP64 FMA per clock per SM; A100 (8.0): 64 and 32.
  EXPECT_EQ(theoretical_ops_per_clock_per_sm(PipeOp::kFFma, 9, 0), 128);
  EXPECT_EQ(theoretical_ops_per_clock_per_sm(PipeOp::kDFma, 9, 0), 64);
  EXPECT_EQ(theoretical_ops_per_clock_per_sm(PipeOp::kFFma, 8, 0), 64);
  EXPECT_EQ(theoretical_ops_per_clock_per_sm(PipeOp::kDFma, 8, 0), 32);
  EXPECT_EQ(theoretical_ops_per_clock_per_sm(PipeOp::kIMad, 9, 0), 0);  // unknown: no claim
}

TEST(ExecParams, BarrierBlocksMustBeCoResident) {
  EXPECT_NO_THROW(validate_barrier_blocks(1, 132));
  EXPECT_NO_THROW(validate_barrier_blocks(2112, 2112));
  EXPECT_THROW(validate_barrier_blocks(0, 132), UsageError);
  EXPECT_THROW(validate_barrier_blocks(2113, 2112), UsageError);
}

TEST(TransferPlan, SizesAreLogSpacedFromOneByteToTheMaximum) {
  const auto full = transfer_sizes(std::uint64_t(1) << 30, false);
  ASSERT_EQ(full.size(), 31u);
  EXPECT_EQ(full.front(), 1u);
  EXPECT_EQ(full.back(), std::uint64_t(1) << 30);
  for (std::size_t i = 1; i < full.size(); ++i) EXPECT_EQ(full[i], 2 * full[i - 1]);
  const auto quick = transfer_sizes(std::uint64_t(64) << 20, true);
  EXPECT_EQ(quick.front(), 1u);
  EXPECT_EQ(quick.back(), std::uint64_t(64) << 20);
  EXPECT_LT(quick.size(), 10u);
  const auto odd = transfer_sizes(1000, false);  // a maximum off the grid is still measured
  EXPECT_EQ(odd.back(), 1000u);
  EXPECT_EQ(odd[odd.size() - 2], 512u);
  EXPECT_THROW(transfer_sizes(0, false), UsageError);
}

TEST(TransferPlan, MaximumRespectsFootprintAndDeviceMemory) {
  const std::uint64_t gib = std::uint64_t(1) << 30;
  EXPECT_EQ(transfer_max_bytes(4 * gib, 80 * gib), gib);
  EXPECT_EQ(transfer_max_bytes(256 << 20, 80 * gib), std::uint64_t(128) << 20);
  EXPECT_EQ(transfer_max_bytes(4 * gib, gib), gib / 4);
}

TEST(TransferPlan, OneGpuSkipsWithOneLineAndNoPairs) {
  int asked = 0;
  const P2pPlan plan = plan_p2p(1, [&](int, int) { ++asked; return true; });
  EXPECT_TRUE(plan.pairs.empty());
  EXPECT_NE(plan.skip_reason.find("skipped"), std::string::npos);
  EXPECT_NE(plan.skip_reason.find("1 GPU"), std::string::npos);
  EXPECT_EQ(plan.skip_reason.find('\n'), std::string::npos);
  EXPECT_EQ(asked, 0);  // no peer query on a single GPU
  EXPECT_FALSE(plan_p2p(0, [](int, int) { return true; }).skip_reason.empty());
}

TEST(TransferPlan, PairsNeedPeerAccessBothWays) {
  const P2pPlan all = plan_p2p(3, [](int, int) { return true; });
  EXPECT_EQ(all.pairs.size(), 6u);
  EXPECT_TRUE(all.skip_reason.empty());
  // 0 <-> 1 both ways; 2 reaches 0 but not back.
  const P2pPlan some = plan_p2p(3, [](int a, int b) { return (a < 2 && b < 2) || (a == 2 && b == 0); });
  EXPECT_EQ(some.pairs, (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}));
  const P2pPlan none = plan_p2p(2, [](int, int) { return false; });
  EXPECT_TRUE(none.pairs.empty());
  EXPECT_FALSE(none.skip_reason.empty());
}

TEST(P2pAxes, TheWriteFormIsIssuedByTheSourceAndTheReadFormByTheDestination) {
  EXPECT_EQ(p2p_issuer(P2pForm::kWrite, 2, 5), 2);
  EXPECT_EQ(p2p_issuer(P2pForm::kRead, 2, 5), 5);
  // The names the entries and the analysis use (analysis/gpuprobe_analysis/sections/p2p.py).
  EXPECT_STREQ(p2p_engine_name(P2pEngine::kCopyEngine), "ce");
  EXPECT_STREQ(p2p_engine_name(P2pEngine::kSm), "sm");
  EXPECT_STREQ(p2p_form_name(P2pForm::kWrite), "write");
  EXPECT_STREQ(p2p_form_name(P2pForm::kRead), "read");
  EXPECT_STREQ(p2p_direction_name(P2pDirection::kOneWay), "uni");
  EXPECT_STREQ(p2p_direction_name(P2pDirection::kBoth), "bidir");
}

TEST(P2pAxes, ChainAddressesMapBackToTheirElements) {
  P2pChain chain;
  chain.memory = reinterpret_cast<std::uint64_t*>(std::uintptr_t(1) << 40);  // never dereferenced here
  chain.elements = 1000;
  chain.spacing = 128;
  chain.seed = 9;
  std::set<std::uint64_t> lap;
  for (std::uint64_t hops = 0; hops < chain.elements; ++hops) {
    const std::uint64_t e = chain.element_after(hops);
    EXPECT_EQ(chain.element_at(chain.address_of(e)), e);
    lap.insert(e);
  }
  EXPECT_EQ(lap.size(), chain.elements);  // one lap visits every element once
  EXPECT_EQ(chain.element_after(chain.elements + 3), chain.element_after(3));
  EXPECT_EQ(chain.element_at(chain.start()), chain.element_after(0));
  EXPECT_EQ(chain.element_at(chain.address_of(0) + 8), chain.elements);  // between two elements
  EXPECT_EQ(chain.element_at(chain.address_of(chain.elements)), chain.elements);  // past the end
  EXPECT_EQ(chain.element_at(chain.address_of(0) - 128), chain.elements);  // before the start
}

}  // namespace
}  // namespace gpuprobe
