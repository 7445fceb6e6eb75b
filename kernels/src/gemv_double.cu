// The double GEMV kernels, in a translation unit of their own so that the two precisions compile in
// parallel (gemv.cu: the float ones and the API).
#include "gemv_kernels.cuh"

#define GPUPROBE_GEMV_T double
GPUPROBE_GEMV_KERNELS_INSTANTIATE
#undef GPUPROBE_GEMV_T
