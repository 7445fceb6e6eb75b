// GPU test of memory.shared_atomics's kernel: after the timed atomics every block's shared words hold
// their start value (the word's index) plus the exact sum of the increments its lanes added. The sums
// are small integers (at most 1023 + 32 x 7 x 256 < 2^24), so the float words are exact as well,
// whatever order the atomics ran in.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/device_buffer.hpp"
#include "probes/memory_probes.hpp"

namespace gpuprobe {
namespace {

constexpr int kThreads = 1024;  // the kernel's block
constexpr unsigned long long kPoisonCycles = ~0ull;

// Word w of every block: w + atomics x the sum of (t mod 7) + 1 over the threads t with t / contention == w.
std::vector<double> expected_words(int contention, int atomics_per_thread) {
  std::vector<double> words(kThreads / contention);
  for (int w = 0; w < static_cast<int>(words.size()); ++w) words[w] = w;
  for (int t = 0; t < kThreads; ++t) words[t / contention] += double(atomics_per_thread) * (t % 7 + 1);
  return words;
}

template <class T>
void check_sums(int blocks, int contention, int atomics_per_thread) {
  SCOPED_TRACE(testing::Message() << (std::is_same_v<T, float> ? "f32" : "u32") << " contention "
                                  << contention << " atomics " << atomics_per_thread << " blocks " << blocks);
  // The whole 1024 words per block, of which the kernel writes 1024 / contention: the rest must stay
  // poisoned (0xFF bytes: 0xFFFFFFFF for u32, a NaN for f32).
  const std::size_t capacity = std::size_t(blocks) * kThreads;
  DeviceBuffer<T> words(capacity);
  DeviceBuffer<unsigned long long> cycles(blocks);
  GP_CUDA_CHECK(cudaMemset(words.data(), 0xFF, words.bytes()));
  GP_CUDA_CHECK(cudaMemset(cycles.data(), 0xFF, cycles.bytes()));
  enqueue_shared_atomics(blocks, contention, atomics_per_thread, cycles.data(), words.data(), nullptr);
  GP_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<T> got(capacity);
  std::vector<unsigned long long> got_cycles(blocks);
  GP_CUDA_CHECK(cudaMemcpy(got.data(), words.data(), words.bytes(), cudaMemcpyDeviceToHost));
  GP_CUDA_CHECK(cudaMemcpy(got_cycles.data(), cycles.data(), cycles.bytes(), cudaMemcpyDeviceToHost));

  const std::vector<double> expected = expected_words(contention, atomics_per_thread);
  const std::size_t per_block = expected.size();
  int mismatches = 0;
  for (int b = 0; b < blocks; ++b) {
    EXPECT_NE(got_cycles[b], kPoisonCycles) << "block " << b << " wrote no cycles";
    EXPECT_GT(got_cycles[b], 0ull) << "block " << b;
    for (std::size_t w = 0; w < per_block && mismatches < 10; ++w) {
      const double value = static_cast<double>(got[b * per_block + w]);
      if (value != expected[w]) {
        ++mismatches;
        ADD_FAILURE() << "block " << b << " word " << w << ": " << value << ", expected " << expected[w];
      }
    }
  }
  // Nothing written past the blocks' words.
  std::uint32_t poison = 0;
  std::memset(&poison, 0xFF, sizeof poison);
  for (std::size_t i = std::size_t(blocks) * per_block; i < capacity && mismatches < 10; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &got[i], sizeof bits);
    if (bits != poison) {
      ++mismatches;
      ADD_FAILURE() << "word " << i << " past the output was overwritten";
    }
  }
}

TEST(MemorySharedAtomics, SumsMatchTheHostReference) {
  int sms = 0;
  GP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // 256: the probe's count; 37: not a multiple of the kernel's unroll (16), so the remainder loop runs;
  // 1: a single atomic per thread. Blocks: every SM (as the probe) and an odd few.
  for (int contention : {1, 2, 4, 8, 16, 32}) {
    for (int atomics : {256, 37, 1}) {
      const int blocks = atomics == 256 ? sms : 3;
      check_sums<std::uint32_t>(blocks, contention, atomics);
      check_sums<float>(blocks, contention, atomics);
    }
  }
}

TEST(MemorySharedAtomics, RejectsContentionOtherThanPowersOfTwoUpTo32) {
  DeviceBuffer<std::uint32_t> words(kThreads);
  DeviceBuffer<unsigned long long> cycles(1);
  for (int contention : {0, 3, 64})
    EXPECT_THROW(enqueue_shared_atomics(1, contention, 1, cycles.data(), words.data(), nullptr), UsageError)
        << "contention " << contention;
}

}  // namespace
}  // namespace gpuprobe
