// Grouped rasterization of the tuned SGEMM (kernels/src/sgemm_swizzle.cuh), checked on the host:
// every tile exactly once for any grid (short last group included), the walk order inside a group,
// and the per-wave panel counts that sgemm_swizzle.cuh and docs/perf/sgemm.md quote.
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "sgemm_swizzle.cuh"

namespace gpuprobe {
namespace {

using kernels::detail::grouped_tile;
using kernels::detail::TileCoord;

constexpr int kGroupM = 16;  // as SgemmImpl::kTuned (kernels/src/sgemm_tuned.cu)

template <int kG>
void expect_bijection(int m_tiles, int n_tiles) {
  SCOPED_TRACE(testing::Message() << "G=" << kG << " m_tiles=" << m_tiles << " n_tiles=" << n_tiles);
  std::vector<int> seen(static_cast<std::size_t>(m_tiles) * n_tiles, 0);
  for (int id = 0; id < m_tiles * n_tiles; ++id) {
    const TileCoord t = grouped_tile<kG>(id, m_tiles, n_tiles);
    ASSERT_GE(t.m_tile, 0);
    ASSERT_LT(t.m_tile, m_tiles);
    ASSERT_GE(t.n_tile, 0);
    ASSERT_LT(t.n_tile, n_tiles);
    ++seen[static_cast<std::size_t>(t.n_tile) * m_tiles + t.m_tile];
  }
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "tile " << i;
}

TEST(SgemmSwizzle, EveryTileExactlyOnce) {
  // Tile counts of the tested and benchmarked shapes (128 x 128 tiles: 1000 -> 8, 2049 -> 17,
  // 4097 -> 33, 5000 -> 40, 16384 -> 128) and small corner cases: one row, one column, fewer M tiles
  // than a group, a multiple of the group, one more than a multiple.
  const int counts[] = {1, 2, 3, 7, 8, 15, 16, 17, 24, 31, 32, 33, 40, 47, 64, 128};
  for (int m_tiles : counts)
    for (int n_tiles : counts) expect_bijection<kGroupM>(m_tiles, n_tiles);
  for (int m_tiles : {1, 5, 9, 13})
    for (int n_tiles : {1, 6, 11}) {
      expect_bijection<1>(m_tiles, n_tiles);
      expect_bijection<4>(m_tiles, n_tiles);
      expect_bijection<3>(m_tiles, n_tiles);
    }
}

TEST(SgemmSwizzle, WalksColumnsOfAGroupWithMFastest) {
  const int m_tiles = 40, n_tiles = 5;  // groups of 16, 16 and 8 rows
  int id = 0;
  for (int first_m : {0, 16, 32}) {
    const int rows = first_m == 32 ? 8 : 16;
    for (int n = 0; n < n_tiles; ++n)
      for (int r = 0; r < rows; ++r, ++id) {
        const TileCoord t = grouped_tile<kGroupM>(id, m_tiles, n_tiles);
        EXPECT_EQ(t.m_tile, first_m + r) << "id " << id;
        EXPECT_EQ(t.n_tile, n) << "id " << id;
      }
  }
  EXPECT_EQ(id, m_tiles * n_tiles);
}

TEST(SgemmSwizzle, FewerMTilesThanAGroupIsThePlainWalk) {
  const int m_tiles = 12, n_tiles = 9;
  for (int id = 0; id < m_tiles * n_tiles; ++id) {
    const TileCoord t = grouped_tile<kGroupM>(id, m_tiles, n_tiles);
    EXPECT_EQ(t.m_tile, id % m_tiles);
    EXPECT_EQ(t.n_tile, id / m_tiles);
  }
}

// A and B panels touched by `window` consecutive ids starting at `first`; grouped_tile<0> is not
// defined, so kG == 0 stands for the plain walk (id % m_tiles, id / m_tiles).
template <int kG>
int panels_touched(int first, int window, int m_tiles, int n_tiles) {
  std::set<int> a, b;
  for (int id = first; id < first + window && id < m_tiles * n_tiles; ++id) {
    TileCoord t{id % m_tiles, id / m_tiles};
    if constexpr (kG > 0) t = grouped_tile<kG>(id, m_tiles, n_tiles);
    a.insert(t.m_tile);
    b.insert(t.n_tile);
  }
  return static_cast<int>(a.size() + b.size());
}

template <int kG>
double mean_panels_per_wave(int tiles, int window) {
  double sum = 0;
  int waves = 0;
  for (int first = 0; first + window <= tiles * tiles; first += window, ++waves)
    sum += panels_touched<kG>(first, window, tiles, tiles);
  return sum / waves;
}

// The figures of sgemm_swizzle.cuh: 264 co-resident blocks (132 SMs x 2), square grids of 128 x 128
// tiles at m = n = k = 4096, 8192 and 16384.
TEST(SgemmSwizzle, PanelsPerWaveQuotedInTheComments) {
  constexpr int kWave = 264;
  EXPECT_EQ(panels_touched<0>(0, kWave, 128, 128), 131);  // 16384: all 128 A panels + 3 B
  EXPECT_EQ(panels_touched<kGroupM>(0, kWave, 128, 128), 33);  // 16 A + 17 B
  EXPECT_EQ(panels_touched<0>(0, kWave, 64, 64), 69);       // 8192
  EXPECT_EQ(panels_touched<kGroupM>(0, kWave, 64, 64), 33);
  EXPECT_EQ(panels_touched<0>(0, kWave, 32, 32), 41);       // 4096
  EXPECT_EQ(panels_touched<kGroupM>(0, kWave, 32, 32), 33);
  EXPECT_NEAR(mean_panels_per_wave<0>(128, kWave), 131.0, 0.5);
  EXPECT_NEAR(mean_panels_per_wave<kGroupM>(128, kWave), 35.0, 0.5);
  EXPECT_NEAR(mean_panels_per_wave<kGroupM>(64, kWave), 36.0, 0.5);
  EXPECT_NEAR(mean_panels_per_wave<kGroupM>(32, kWave), 38.0, 0.5);
  // G = 16 against its neighbours at 16384 (fewest panels per wave among 8..32).
  EXPECT_LT(mean_panels_per_wave<kGroupM>(128, kWave), mean_panels_per_wave<8>(128, kWave));
  EXPECT_LT(mean_panels_per_wave<kGroupM>(128, kWave), mean_panels_per_wave<12>(128, kWave));
  EXPECT_LT(mean_panels_per_wave<kGroupM>(128, kWave), mean_panels_per_wave<24>(128, kWave));
  EXPECT_LT(mean_panels_per_wave<kGroupM>(128, kWave), mean_panels_per_wave<32>(128, kWave));
}

}  // namespace
}  // namespace gpuprobe
