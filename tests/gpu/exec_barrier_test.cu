// Every grid barrier the exec.barrier probe times is a barrier: data each block writes before it is
// seen by every block after it (plain loads), over many rounds, at 1 block per SM and at the
// co-resident maximum; and the check does catch a missing barrier (negative control).
#include <gtest/gtest.h>

#include <string>

#include "gpuprobe/check.hpp"
#include "harness/measure.hpp"
#include "probes/exec_barrier.hpp"

namespace gpuprobe {
namespace {

struct BarrierCase {
  BarrierKind kind;
  bool full;  // the co-resident maximum rather than 1 block per SM
};

class BarrierCorrectness : public ::testing::TestWithParam<BarrierCase> {};

TEST_P(BarrierCorrectness, DataBeforeIsSeenByEveryBlockAfter) {
  const BarrierCase c = GetParam();
  const int blocks = c.full ? barrier_co_resident_blocks(c.kind, true) : context().device.sm_count;
  ASSERT_GE(blocks, context().device.sm_count);
  // A generous spin timeout: under compute-sanitizer the kernels run many times slower.
  BarrierRun run(c.kind, blocks, c.full ? 8 : 24, true, 20000);
  for (int pass = 0; pass < 2; ++pass) {  // later passes continue the generations of earlier ones
    run.enqueue(nullptr);
    const BarrierOutcome o = run.outcome();
    EXPECT_EQ(o.errors, 0u) << barrier_name(c.kind) << " with " << blocks << " blocks, pass " << pass;
    EXPECT_FALSE(o.timed_out) << barrier_name(c.kind) << " with " << blocks << " blocks, pass " << pass;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, BarrierCorrectness,
    ::testing::Values(BarrierCase{BarrierKind::kCooperativeGroups, false}, BarrierCase{BarrierKind::kCooperativeGroups, true},
                      BarrierCase{BarrierKind::kArrivalWakeup, false}, BarrierCase{BarrierKind::kArrivalWakeup, true},
                      BarrierCase{BarrierKind::kSenseReversal, false}, BarrierCase{BarrierKind::kSenseReversal, true},
                      BarrierCase{BarrierKind::kRelaunch, false}, BarrierCase{BarrierKind::kRelaunch, true}),
    [](const auto& info) {
      return std::string(barrier_name(info.param.kind)) + (info.param.full ? "_co_resident_max" : "_one_per_sm");
    });

TEST(BarrierCheck, DetectsAMissingBarrier) {
  // The negative control: the same write / verify rounds with no barrier between them must show
  // stale words, or the check above could not fail.
  const int blocks = barrier_co_resident_blocks(BarrierKind::kNoBarrierForTesting, true);
  BarrierRun run(BarrierKind::kNoBarrierForTesting, blocks, 8, true, 20000);
  run.enqueue(nullptr);
  const BarrierOutcome o = run.outcome();
  EXPECT_GT(o.errors, 0u);
}

TEST(BarrierCheck, RefusesMoreBlocksThanCanBeResident) {
  const int max = barrier_co_resident_blocks(BarrierKind::kArrivalWakeup, false);
  EXPECT_THROW(BarrierRun(BarrierKind::kArrivalWakeup, max + 1, 4, false), UsageError);
  EXPECT_THROW(BarrierRun(BarrierKind::kSenseReversal, 0, 4, false), UsageError);
}

}  // namespace
}  // namespace gpuprobe
