// The peer-to-peer code the transfer.p2p* probes time (transfer_p2p.hpp) moves the right bytes across
// the link: copy engine and SM copies in both forms (write: issued by the source, read: by the
// destination) land random data exactly, at an irregular size, and nothing past the end; a
// bidirectional transfer forked from and joined into one stream lands both ways once that stream
// alone is synchronized; the chase kernel on one GPU follows a chain in the other's memory to the
// element the host predicts. Skipped with fewer than two GPUs or without peer access both ways.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpuprobe/check.hpp"
#include "gpuprobe/hash.hpp"
#include "probes/transfer_p2p.hpp"

namespace gpuprobe {
namespace {

// The first two GPUs, when they reach each other's memory both ways.
bool two_peers(int& a, int& b, std::string& why) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    cudaGetLastError();
    why = std::to_string(count) + " GPU visible (peer-to-peer needs 2)";
    return false;
  }
  int ab = 0, ba = 0;
  GP_CUDA_CHECK(cudaDeviceCanAccessPeer(&ab, 0, 1));
  GP_CUDA_CHECK(cudaDeviceCanAccessPeer(&ba, 1, 0));
  if (!ab || !ba) {
    why = "GPUs 0 and 1 have no peer access both ways";
    return false;
  }
  a = 0;
  b = 1;
  return true;
}

#define REQUIRE_TWO_PEERS(a, b)          \
  int a = 0, b = 0;                      \
  {                                      \
    std::string why;                     \
    if (!two_peers(a, b, why)) GTEST_SKIP() << why; \
  }

constexpr unsigned char kPoison = 0xee;
constexpr std::size_t kMargin = 64;  // poisoned bytes after the copy that must stay untouched

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(mix64(seed ^ mix64(i)) & 0xff);
  return v;
}

void upload(const P2pBuffer& buffer, const void* host, std::size_t bytes) {
  DeviceScope on(buffer.device());
  GP_CUDA_CHECK(cudaMemcpy(buffer.data(), host, bytes, cudaMemcpyHostToDevice));
}

void poison(const P2pBuffer& buffer) {
  DeviceScope on(buffer.device());
  GP_CUDA_CHECK(cudaMemset(buffer.data(), kPoison, buffer.bytes()));
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<unsigned char> download(const P2pBuffer& buffer) {
  std::vector<unsigned char> v(buffer.bytes());
  DeviceScope on(buffer.device());
  GP_CUDA_CHECK(cudaMemcpy(v.data(), buffer.data(), v.size(), cudaMemcpyDeviceToHost));
  return v;
}

// The copy landed exactly `want` and left the margin after it poisoned.
void expect_landed(const P2pBuffer& dst, const std::vector<unsigned char>& want) {
  const std::vector<unsigned char> got = download(dst);
  ASSERT_GE(got.size(), want.size() + kMargin);
  std::size_t wrong = 0, first_wrong = want.size();
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      if (wrong++ == 0) first_wrong = i;
    }
  EXPECT_EQ(wrong, 0u) << "first wrong byte at " << first_wrong;
  std::size_t beyond = 0;
  for (std::size_t i = want.size(); i < want.size() + kMargin; ++i) beyond += got[i] != kPoison;
  EXPECT_EQ(beyond, 0u) << "bytes written past the end of the copy";
}

struct Case {
  P2pEngine engine;
  P2pForm form;
};
const Case kCases[] = {{P2pEngine::kCopyEngine, P2pForm::kWrite},
                       {P2pEngine::kCopyEngine, P2pForm::kRead},
                       {P2pEngine::kSm, P2pForm::kWrite},
                       {P2pEngine::kSm, P2pForm::kRead}};

TEST(P2pCopy, EveryEngineAndFormCopiesRandomDataAcrossTheLink) {
  REQUIRE_TWO_PEERS(a, b);
  // Not a multiple of 16: the SM copy's byte tail is exercised too.
  constexpr std::size_t kBytes = (std::size_t(3) << 20) + 37;
  for (const Case& c : kCases)
    for (const auto& [src_device, dst_device] : {std::pair<int, int>{a, b}, std::pair<int, int>{b, a}}) {
      SCOPED_TRACE(std::string(p2p_engine_name(c.engine)) + " " + p2p_form_name(c.form) + " " +
                   std::to_string(src_device) + "->" + std::to_string(dst_device));
      P2pBuffer src(src_device, kBytes + kMargin), dst(dst_device, kBytes + kMargin);
      const std::vector<unsigned char> data = random_bytes(kBytes, 0x1234 + 16 * src_device + dst_device);
      upload(src, data.data(), kBytes);
      poison(dst);
      const P2pCopy copy{src_device, src.data(), dst_device, dst.data(), kBytes};
      const int issuer = p2p_issuer(c.form, src_device, dst_device);
      EXPECT_EQ(issuer, c.form == P2pForm::kWrite ? src_device : dst_device);
      const int other = issuer == src_device ? dst_device : src_device;
      p2p_enable_access(issuer, other);
      if (c.engine == P2pEngine::kCopyEngine) p2p_enable_access(other, issuer);
      {
        DeviceScope on(issuer);
        cudaStream_t stream = nullptr;
        GP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        p2p_enqueue_copy(c.engine, c.form, copy, stream);
        GP_CUDA_CHECK(cudaStreamSynchronize(stream));
        GP_CUDA_CHECK(cudaStreamDestroy(stream));
      }
      expect_landed(dst, data);
    }
}

TEST(P2pCopy, BidirectionalTransferLandsBothWaysWhenTheTimedStreamIsDone) {
  REQUIRE_TWO_PEERS(a, b);
  constexpr std::size_t kBytes = (std::size_t(8) << 20) + 16 * 3 + 5;
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(p2p_engine_name(c.engine)) + " " + p2p_form_name(c.form));
    P2pBuffer a_src(a, kBytes + kMargin), a_dst(a, kBytes + kMargin), b_src(b, kBytes + kMargin),
        b_dst(b, kBytes + kMargin);
    const std::vector<unsigned char> ab = random_bytes(kBytes, 0xab), ba = random_bytes(kBytes, 0xba);
    upload(a_src, ab.data(), kBytes);
    upload(b_src, ba.data(), kBytes);
    poison(a_dst);
    poison(b_dst);
    const std::vector<P2pCopy> copies{{a, a_src.data(), b, b_dst.data(), kBytes},
                                      {b, b_src.data(), a, a_dst.data(), kBytes}};
    p2p_enable_access(a, b);
    p2p_enable_access(b, a);
    // As the probe: the timed stream on the probed GPU (a), one lane per issuing GPU.
    std::vector<int> issuers;
    for (const P2pCopy& copy : copies) issuers.push_back(p2p_issuer(c.form, copy.src_device, copy.dst_device));
    ASSERT_NE(issuers[0], issuers[1]) << "the two directions must run on two GPUs";
    DeviceScope on(a);
    cudaStream_t timed = nullptr;
    GP_CUDA_CHECK(cudaStreamCreateWithFlags(&timed, cudaStreamNonBlocking));
    {
      P2pLanes lanes(a, issuers);
      p2p_enqueue_transfer(lanes, c.engine, c.form, copies, timed);
      int current = -1;
      GP_CUDA_CHECK(cudaGetDevice(&current));
      EXPECT_EQ(current, a) << "enqueueing must leave the current device as it was";
      GP_CUDA_CHECK(cudaStreamSynchronize(timed));  // only the timed stream: the join must cover both
      expect_landed(b_dst, ab);
      expect_landed(a_dst, ba);
    }
    GP_CUDA_CHECK(cudaStreamDestroy(timed));
  }
}

// Sattolo's algorithm: a uniformly random single cycle over n elements, independent of the device
// chain builder; next[e] is the element after e.
std::vector<std::uint64_t> host_cycle(std::uint64_t n, std::uint64_t seed) {
  std::vector<std::uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::uint64_t i = n - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<std::uint64_t>(0, i - 1)(rng)]);
  std::vector<std::uint64_t> next(n);
  for (std::uint64_t i = 0; i < n; ++i) next[order[i]] = order[(i + 1) % n];
  return next;
}

std::uint64_t chase_on(int device, std::uint64_t start, std::uint64_t hops) {
  DeviceScope on(device);
  P2pBuffer result(device, 3 * sizeof(std::uint64_t));
  GP_CUDA_CHECK(cudaMemset(result.data(), 0xff, result.bytes()));
  p2p_chase(start, hops, reinterpret_cast<std::uint64_t*>(result.data()), nullptr);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  std::uint64_t words[3];
  GP_CUDA_CHECK(cudaMemcpy(words, result.data(), sizeof(words), cudaMemcpyDeviceToHost));
  // The clocks were written (not the poison) and count at least one cycle per hop.
  EXPECT_NE(words[1], ~std::uint64_t(0));
  EXPECT_GT(words[1], hops);
  EXPECT_NE(words[2], ~std::uint64_t(0));
  return words[0];
}

TEST(P2pChase, FollowsAHostBuiltChainInThePeersMemory) {
  REQUIRE_TWO_PEERS(a, b);
  constexpr std::uint64_t kElements = 1000, kSpacing = 128;
  const std::vector<std::uint64_t> next = host_cycle(kElements, 77);
  P2pBuffer memory(b, kElements * kSpacing);
  const auto base = reinterpret_cast<std::uint64_t>(memory.data());
  std::vector<std::uint64_t> words(kElements * kSpacing / 8, 0);
  for (std::uint64_t e = 0; e < kElements; ++e) words[e * kSpacing / 8] = base + next[e] * kSpacing;
  upload(memory, words.data(), memory.bytes());
  p2p_enable_access(a, b);
  for (std::uint64_t hops : {std::uint64_t(1), std::uint64_t(999), std::uint64_t(1000), std::uint64_t(2345)}) {
    SCOPED_TRACE("hops " + std::to_string(hops));
    std::uint64_t want = 5;
    for (std::uint64_t i = 0; i < hops; ++i) want = next[want];
    EXPECT_EQ(chase_on(a, base + 5 * kSpacing, hops), base + want * kSpacing);
  }
}

TEST(P2pChase, DeviceBuiltChainIsOneCycleAndTheChaseEndsWhereTheOrderSays) {
  REQUIRE_TWO_PEERS(a, b);
  P2pBuffer memory(b, 4096 * 128);
  P2pChain chain;
  chain.memory = reinterpret_cast<std::uint64_t*>(memory.data());
  chain.elements = 4096 - 3;  // not a power of two: the permutation walks cycles
  chain.spacing = 128;
  chain.seed = 42;
  poison(memory);
  p2p_build_chain(b, chain);
  // The chain as written: one lap from start() visits every element once and returns.
  const std::vector<unsigned char> bytes = download(memory);
  std::vector<char> seen(chain.elements, 0);
  std::uint64_t address = chain.start();
  for (std::uint64_t i = 0; i < chain.elements; ++i) {
    const std::uint64_t e = chain.element_at(address);
    ASSERT_LT(e, chain.elements) << "hop " << i << " left the chain";
    ASSERT_FALSE(seen[e]) << "element " << e << " visited twice";
    seen[e] = 1;
    EXPECT_EQ(e, chain.element_after(i));
    std::memcpy(&address, bytes.data() + e * chain.spacing, sizeof(address));
  }
  EXPECT_EQ(address, chain.start());
  p2p_enable_access(a, b);
  for (std::uint64_t hops : {std::uint64_t(7), chain.elements + 11, std::uint64_t(8192)}) {
    SCOPED_TRACE("hops " + std::to_string(hops));
    EXPECT_EQ(chain.element_at(chase_on(a, chain.start(), hops)), chain.element_after(hops));
  }
}

}  // namespace
}  // namespace gpuprobe
