# Which CUDA toolkits gpuprobe builds with, and what an older one leaves out. Pure functions of a
# version and a few paths, so that tests/cmake/cuda_toolkit_test.cmake can check them with cmake -P.
include_guard(GLOBAL)

# The oldest toolkit worth supporting: mma.sync on fp8 (e4m3/e5m2, exec.tensor's sm_89 forms) needs
# PTX ISA 8.4, which CUDA 12.4 brought; everything else gpuprobe uses exists there too.
set(GPUPROBE_MIN_CUDA_VERSION 12.4)
# The toolkit gpuprobe is built and run with on the GPU machines; CUDA 12 is checked against its
# headers only (scripts/dev/cuda12_headers_check.sh, README "Toolkits").
set(GPUPROBE_TESTED_CUDA_VERSION 13.0)

# The first toolkit that can compile for an architecture: 80 11.0, 86 11.1, 89 11.8, 90 12.0,
# 100 and 120 12.8. Sets <out> to that version, or "" for one not listed (left to nvcc).
function(gpuprobe_arch_min_cuda arch out)
  string(REGEX MATCH "^[0-9]+" num "${arch}")
  set(v "")
  if(num EQUAL 80)
    set(v 11.0)
  elseif(num EQUAL 86)
    set(v 11.1)
  elseif(num EQUAL 89)
    set(v 11.8)
  elseif(num EQUAL 90)
    set(v 12.0)
  elseif(num EQUAL 100 OR num EQUAL 120)
    set(v 12.8)
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# Sets <out> to one line saying why toolkit <version> cannot build gpuprobe for <archs>, or to "".
function(gpuprobe_cuda_toolkit_problem version archs out)
  set(problem "")
  if(version VERSION_LESS GPUPROBE_MIN_CUDA_VERSION)
    string(CONCAT problem "gpuprobe: CUDA ${version} is too old: gpuprobe needs CUDA ${GPUPROBE_MIN_CUDA_VERSION} "
           "or newer (mma.sync on fp8 needs PTX ISA 8.4); install a newer toolkit or pass -DCUDAToolkit_ROOT=<dir>")
  else()
    foreach(a IN LISTS archs)
      gpuprobe_arch_min_cuda("${a}" need)
      if(need AND version VERSION_LESS need)
        string(CONCAT problem "gpuprobe: CUDA ${version} cannot compile for sm_${a} (it needs CUDA ${need} or "
               "newer); pass -DCMAKE_CUDA_ARCHITECTURES=<list> without it, or use a newer toolkit")
        break()
      endif()
    endforeach()
  endif()
  set(${out} "${problem}" PARENT_SCOPE)
endfunction()

# Sets <out> to ON when one of <include_dirs> holds the CUPTI Range Profiling API (cupti_range_profiler.h
# beside cupti_profiler_host.h), the API of gpuprobe's counter backend. CUPTI first shipped it in its
# 12.6.80 release (CUDA 12.6's last update); CUPTI_API_VERSION is 24 both there and in 12.6.68, which
# lacks it, so the header itself is what tells.
function(gpuprobe_have_cupti_range_profiler include_dirs out)
  set(have OFF)
  foreach(d IN LISTS include_dirs)
    if(EXISTS "${d}/cupti_range_profiler.h" AND EXISTS "${d}/cupti_profiler_host.h")
      set(have ON)
    endif()
  endforeach()
  set(${out} ${have} PARENT_SCOPE)
endfunction()
