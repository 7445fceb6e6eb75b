// The NCCL collectives transfer.collective times give the right results: allreduce, reduce,
// reduce-scatter, allgather and broadcast of random floats over GPUs 0 .. G-1 (every G = 2, 4, ...
// the machine has), at irregular counts, checked against a host reference in double, on outputs
// poisoned with NaN first. The calls go through enqueue_collective_joined, bracketed by a stream of
// the current device as the probe's timed samples are, and only that stream is waited for: the join
// must cover every rank. Built only with NCCL; skipped with fewer than two GPUs.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gpuprobe/check.hpp"
#include "harness/device.hpp"
#include "harness/fill.hpp"
#include "probes/transfer_collective.hpp"
#include "probes/transfer_collective_plan.hpp"

namespace gpuprobe {
namespace {

std::vector<float> to_host(const RankBuffer& b, std::size_t count) {
  std::vector<float> out(count);
  GP_CUDA_CHECK(cudaSetDevice(b.device()));
  GP_CUDA_CHECK(cudaMemcpy(out.data(), b.data(), count * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

// |got - want| within the float rounding of a sum of `terms` values whose magnitudes add to `abs_sum`
// (each addition rounds once, relative 2^-24), with a factor 4 of slack for NCCL's summation order.
::testing::AssertionResult close(float got, double want, double abs_sum, int terms) {
  const double tol = 4.0 * terms * std::ldexp(1.0, -24) * abs_sum + 1e-30;
  if (std::isfinite(got) && std::fabs(got - want) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (tolerance " << tol << ")";
}

// Waits for `origin` at most kCollectiveWaitSeconds; past it, aborts the clique's communicators (their
// kernels stop) and throws: a collective that never completes fails the test instead of hanging it.
void wait_bounded(cudaStream_t origin, NcclClique& clique) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kCollectiveWaitSeconds);
  for (;;) {
    const cudaError_t status = cudaStreamQuery(origin);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) GP_CUDA_CHECK(status);
    if (std::chrono::steady_clock::now() > deadline) {
      clique.synchronize(0);  // aborts and throws while a rank is still busy
      throw Error("the bracketing stream did not complete, though every rank's stream did: the join is broken");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

class Collective : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_ = device_count();
    if (devices_ < 2) GTEST_SKIP() << "collectives need at least 2 GPUs, " << devices_ << " visible";
  }
  int devices_ = 0;
};

// Runs one op at one count `calls` times back to back on the same buffers (as the probe's samples
// do) and checks the result; returns the number of wrong elements (the first ones as failures).
std::size_t check_op(NcclClique& clique, CollectiveOp op, std::size_t nccl_count, std::uint64_t seed,
                     int calls = 1) {
  const int g = clique.ranks();
  const CollectiveCounts counts = collective_counts_from_nccl_count(op, g, nccl_count);
  CollectiveBuffers b = make_collective_buffers(clique, counts.send, counts.recv);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int r = 0; r < g; ++r) {
    GP_CUDA_CHECK(cudaSetDevice(clique.device(r)));
    fill_uniform(b.send[r].data(), counts.send, seed + r, -1.f, 1.f);
    fill_constant(b.recv[r].data(), counts.recv, nan);  // poison: an element NCCL does not write stays NaN
    GP_CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<std::vector<float>> send(g);
  for (int r = 0; r < g; ++r) send[r] = to_host(b.send[r], counts.send);

  // Bracketed by a stream of device 0, as the probe's samples are; only that stream is waited for.
  GP_CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t origin = nullptr;
  cudaEvent_t fork = nullptr;
  GP_CUDA_CHECK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
  GP_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  for (int i = 0; i < calls; ++i) enqueue_collective_joined(clique, origin, fork, op, counts, b);
  wait_bounded(origin, clique);
  std::vector<std::vector<float>> recv(g);
  for (int r = 0; r < g; ++r) recv[r] = to_host(b.recv[r], counts.recv);  // before any other wait
  clique.synchronize(kCollectiveWaitSeconds);                               // surfaces NCCL's own errors
  GP_CUDA_CHECK(cudaSetDevice(0));
  cudaEventDestroy(fork);
  cudaStreamDestroy(origin);

  std::size_t wrong = 0;
  auto expect = [&](bool ok, const ::testing::AssertionResult& why, int rank, std::size_t i) {
    if (ok) return;
    if (++wrong <= 5)
      ADD_FAILURE() << collective_name(op) << " G=" << g << " count=" << nccl_count << " rank " << rank
                    << " element " << i << ": " << why.message();
  };
  const std::size_t n = nccl_count;
  auto reduced = [&](std::size_t at, double& abs_sum) {
    double sum = 0;
    abs_sum = 0;
    for (int k = 0; k < g; ++k) {
      sum += send[k][at];
      abs_sum += std::fabs(send[k][at]);
    }
    return sum;
  };
  switch (op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kReduce:
      for (int r = 0; r < g; ++r) {
        if (op == CollectiveOp::kReduce && r != kCollectiveRoot) continue;  // recvbuff is the root's only
        for (std::size_t i = 0; i < n; ++i) {
          double abs_sum = 0;
          const double want = reduced(i, abs_sum);
          const auto res = close(recv[r][i], want, abs_sum, g);
          expect(bool(res), res, r, i);
        }
      }
      break;
    case CollectiveOp::kReduceScatter:
      for (int r = 0; r < g; ++r)
        for (std::size_t i = 0; i < n; ++i) {
          double abs_sum = 0;
          const double want = reduced(r * n + i, abs_sum);
          const auto res = close(recv[r][i], want, abs_sum, g);
          expect(bool(res), res, r, i);
        }
      break;
    case CollectiveOp::kAllGather:
      for (int r = 0; r < g; ++r)
        for (int k = 0; k < g; ++k)
          for (std::size_t i = 0; i < n; ++i) {
            const float got = recv[r][k * n + i], want = send[k][i];
            expect(got == want, ::testing::AssertionFailure() << "got " << got << ", want " << want, r, k * n + i);
          }
      break;
    case CollectiveOp::kBroadcast:
      for (int r = 0; r < g; ++r)
        for (std::size_t i = 0; i < n; ++i) {
          const float got = recv[r][i], want = send[kCollectiveRoot][i];
          expect(got == want, ::testing::AssertionFailure() << "got " << got << ", want " << want, r, i);
        }
      break;
  }
  return wrong;
}

TEST_F(Collective, EveryOpMatchesTheHostReferenceAtIrregularCounts) {
  // 1 element, odd counts, one past a power of two, and ~1M + 3 (past NCCL's small-size protocols).
  const std::size_t counts[] = {1, 3, 1000, 4097, 65537, (std::size_t(1) << 20) + 3};
  std::uint64_t seed = 1234;
  for (int g : collective_group_sizes(devices_)) {
    NcclClique clique(g);
    for (CollectiveOp op : collective_ops())
      for (std::size_t n : counts) {
        SCOPED_TRACE(std::string(collective_name(op)) + " G=" + std::to_string(g) + " count=" + std::to_string(n));
        EXPECT_EQ(check_op(clique, op, n, seed += 17), 0u);
      }
  }
}

TEST_F(Collective, BackToBackCallsOnTheSameBuffersStayCorrect) {
  // The probe's samples call the same collective on the same buffers again and again, each forked from
  // and joined into the timed stream: calls must not overlap or race each other.
  NcclClique clique(2);
  for (CollectiveOp op : collective_ops()) {
    SCOPED_TRACE(collective_name(op));
    EXPECT_EQ(check_op(clique, op, 262147, 99, /*calls=*/5), 0u);
  }
}

TEST_F(Collective, TooSmallBuffersAreRefusedBeforeNcclIsCalled) {
  NcclClique clique(2);
  CollectiveBuffers b = make_collective_buffers(clique, 8, 8);
  const CollectiveCounts counts = collective_counts_from_nccl_count(CollectiveOp::kAllGather, 2, 8);  // recv 16
  EXPECT_THROW(enqueue_collective(clique, CollectiveOp::kAllGather, counts, b), Error);
  clique.synchronize(kCollectiveWaitSeconds);  // nothing was enqueued: the clique is still usable
  EXPECT_FALSE(clique.aborted());
}

}  // namespace
}  // namespace gpuprobe
