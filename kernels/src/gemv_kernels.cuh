// The GEMV implementations' entry points, detail::GemvKernels<kImpl>::plan<T> / launch<T> (declared in
// gemv.hpp), for the translation units that instantiate them: gemv.cu (float) and gemv_double.cu
// (double). Design: gemv.cu's header. One part per implementation, each independent of the others:
//   gemv_common.cuh             kAuto's thresholds, the 256-thread block, the workspace's counter
//                               area, the validated arguments and the launches' error;
//   gemv_split_reduce.cuh       kSplitReduce;
//   gemv_single_pass_plan.cuh   kSinglePass's (and the row blocks') plan: block shapes, segments;
//   gemv_single_pass.cuh        its kernels and launch;
//   gemv_column_blocks.cuh      kColumnBlocks.
#pragma once

#include "gemv_column_blocks.cuh"
#include "gemv_common.cuh"
#include "gemv_single_pass.cuh"
#include "gemv_split_reduce.cuh"

namespace gpuprobe::kernels::detail {

// kSinglePass and its row-block shapes share one plan and one launch, which take the impl.
constexpr bool runs_single_pass(GemvImpl impl) {
  return impl == GemvImpl::kSinglePass || impl == GemvImpl::kRowBlocks || impl == GemvImpl::kRowBlocksSector;
}

template <GemvImpl kImpl>
template <class T>
GemvPlanSummary GemvKernels<kImpl>::plan(Trans trans, int m, int n) {
  static_assert(kImpl == GemvImpl::kSplitReduce || kImpl == GemvImpl::kColumnBlocks || runs_single_pass(kImpl),
                "a GemvImpl with kernels of its own: add its part to GemvKernels::plan and launch");
  if constexpr (kImpl == GemvImpl::kSplitReduce)
    return plan_split_reduce<T>(trans, m, n);
  else if constexpr (kImpl == GemvImpl::kColumnBlocks)
    return plan_column_blocks<T>(trans, m, n);
  else
    return plan_single_pass<T>(kImpl, trans, m, n);
}

template <GemvImpl kImpl>
template <class T>
cudaError_t GemvKernels<kImpl>::launch(const GemvArgs<T>& args, cudaStream_t stream) {
  if constexpr (kImpl == GemvImpl::kSplitReduce)
    return launch_split_reduce<T>(args, stream);
  else if constexpr (kImpl == GemvImpl::kColumnBlocks)
    return launch_column_blocks<T>(args, stream);
  else
    return launch_single_pass<T>(kImpl, args, stream);
}

}  // namespace gpuprobe::kernels::detail

// Instantiates every implementation's entry points for GPUPROBE_GEMV_T (float or double), in the
// unit that defines it before using this.
#define GPUPROBE_GEMV_INSTANTIATE_ONE(Impl) GPUPROBE_GEMV_KERNEL_ENTRY_POINTS(, Impl, GPUPROBE_GEMV_T)
#define GPUPROBE_GEMV_KERNELS_INSTANTIATE                   \
  namespace gpuprobe::kernels::detail {                     \
  GPUPROBE_GEMV_IMPLS_WITH_KERNELS(GPUPROBE_GEMV_INSTANTIATE_ONE) \
  }
