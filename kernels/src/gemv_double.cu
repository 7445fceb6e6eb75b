// The double GEMV kernels, in a translation unit of their own so that the two precisions compile in
// parallel (gemv.cu: the float ones and the API).
#include "gemv_kernels.cuh"

GPUPROBE_GEMV_KERNELS_INSTANTIATE(double)
