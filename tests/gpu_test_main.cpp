// GPU test runner: exits 77 (CTest "skipped") when no GPU is present, so CI stays meaningful.
#include <gtest/gtest.h>

#include <cstdio>

#include "gpuprobe/check.hpp"
#include "harness/device.hpp"
#include "harness/measure.hpp"

int main(int argc, char** argv) {
  try {
    gpuprobe::context().device = gpuprobe::open_device(0);
  } catch (const gpuprobe::NoDeviceError& e) {
    std::printf("SKIPPED: %s\n", e.what());
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
