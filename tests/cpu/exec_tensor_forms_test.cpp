// The tensor forms the binary holds kernels for, read without a GPU: every mma.sync form, then the wgmma
// forms whose wrappers the build generated (gen_wgmma_forms.py: 8 type pairs x 6 N x 2 A sources), each
// once. A build that silently stopped generating them would run no wgmma entry and say nothing.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "probes/exec_tensor.hpp"

namespace gpuprobe {
namespace {

TEST(TensorForms, EveryMmaFormThenEveryGeneratedWgmmaFormOnce) {
  int mma = 0, wgmma = 0;
  std::set<std::string> seen;
  for (const TensorForm& f : tensor_forms()) {
    if (f.instr == TensorInstr::kMma) {
      EXPECT_EQ(wgmma, 0) << "mma.sync forms come first: " << f.describe();
      ++mma;
    } else {
      ++wgmma;
    }
    EXPECT_TRUE(seen.insert(f.describe()).second) << "twice: " << f.describe();
  }
  EXPECT_EQ(mma, 11);
  // Python found at configure time and 90 among the architectures: the wrappers are generated and every form is
  // built; without either, none (a build for sm_80 holds no wgmma instruction).
  EXPECT_EQ(wgmma, GPUPROBE_WGMMA_FORMS_EXPECTED ? 96 : 0);
}

}  // namespace
}  // namespace gpuprobe
