// Pointer-chase chains: the order in which a chase visits the elements of a buffer.
//
// A chain over n elements (element i at byte offset i * spacing) is one cycle that visits every
// element exactly once per lap. `chain_position_to_element(order, p)` gives the element visited at
// position p of the lap; element order(p) then holds the absolute address of element order(p+1).
// The same host/device code builds chains on the GPU (one thread per position, so a 4 GiB chain
// is built in milliseconds) and is checked on the CPU by tests/cpu/memory_chains_test.cpp.
#pragma once

#include <cstdint>

#include "gpuprobe/hash.hpp"

namespace gpuprobe {

enum class ChainPattern {
  kRandom,  // a keyed pseudo-random permutation: no spatial locality between consecutive loads
  kStride,  // element i -> i + 1: a fixed stride of `spacing` bytes
};

// A bijection on [0, n): a 4-round Feistel network over the smallest even-bit power-of-two domain
// >= n, with cycle walking (re-applied until the value falls inside [0, n)). The domain is at most
// 4n, so the expected number of walks is below 4.
struct RandomPermutation {
  std::uint64_t n;
  std::uint64_t key;
  unsigned half_bits;  // each Feistel half has this many bits

  GP_HOST_DEVICE static RandomPermutation make(std::uint64_t count, std::uint64_t seed) {
    unsigned bits = 2;  // total bits, even
    while ((std::uint64_t(1) << bits) < count) bits += 2;
    return RandomPermutation{count, mix64(seed), bits / 2};
  }

  GP_HOST_DEVICE std::uint64_t feistel(std::uint64_t x) const {
    const std::uint64_t mask = (std::uint64_t(1) << half_bits) - 1;
    std::uint64_t left = x >> half_bits, right = x & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      const std::uint64_t f = mix64(key ^ (round << 56) ^ right) & mask;
      const std::uint64_t next_right = left ^ f;
      left = right;
      right = next_right;
    }
    return (left << half_bits) | right;
  }

  GP_HOST_DEVICE std::uint64_t operator()(std::uint64_t i) const {
    std::uint64_t x = feistel(i);
    while (x >= n) x = feistel(x);  // cycle walking keeps it a bijection on [0, n)
    return x;
  }
};

struct ChainOrder {
  ChainPattern pattern;
  RandomPermutation permutation;  // used when pattern == kRandom
};

GP_HOST_DEVICE inline ChainOrder make_chain_order(ChainPattern pattern, std::uint64_t n, std::uint64_t seed) {
  return ChainOrder{pattern, RandomPermutation::make(n, seed)};
}

// Element visited at lap position `position` (0 <= position < n).
GP_HOST_DEVICE inline std::uint64_t chain_position_to_element(const ChainOrder& order, std::uint64_t position) {
  return order.pattern == ChainPattern::kRandom ? order.permutation(position) : position;
}

// Byte offset of element `element`. `skew_lines` > 0 adds (element mod skew_lines) * 128 B, so that
// large power-of-two strides (TLB probes) do not all fall into the same cache sets; the offset stays
// below the stride, so every element still lies in its own page-sized slot.
GP_HOST_DEVICE inline std::uint64_t chain_element_offset(std::uint64_t element, std::uint64_t spacing,
                                                         std::uint64_t skew_lines) {
  return element * spacing + (skew_lines ? (element % skew_lines) * 128 : 0);
}

}  // namespace gpuprobe
