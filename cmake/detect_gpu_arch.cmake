# The compute capabilities of the GPUs present, and the check of a requested architecture list.
include_guard(GLOBAL)

# Lowest compute capability the kernels can target (they use cp.async and mbarrier, sm_80 and newer).
# CI compiles every CUDA source for the architectures below (.ci/run); only sm_90 has run on a GPU
# (docs/architectures.md). Another capability builds with a warning that nothing checks it.
set(GPUPROBE_MIN_ARCH 80)
set(GPUPROBE_COMPILED_ARCHS 80 86 89 90 100 120)

# Sets <out> to the distinct capabilities of the GPUs nvidia-smi lists ("90;100"), or to "" when
# there is no nvidia-smi or no GPU (a build machine).
function(gpuprobe_detect_gpu_arch out)
  set(archs "")
  find_program(_nvidia_smi nvidia-smi)
  if(_nvidia_smi)
    execute_process(COMMAND ${_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0)
      string(REPLACE "\n" ";" caps "${caps}")
      foreach(cap IN LISTS caps)
        string(STRIP "${cap}" cap)
        if(cap MATCHES "^([0-9]+)\\.([0-9]+)$")
          list(APPEND archs "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
        endif()
      endforeach()
      list(REMOVE_DUPLICATES archs)
    endif()
  endif()
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

# Stops with one clear message for an architecture the code cannot compile for, and warns for one CI does
# not compile for. "native", "all" and "all-major" are left to CMake.
function(gpuprobe_check_archs archs)
  foreach(a IN LISTS archs)
    string(REGEX MATCH "^[0-9]+" num "${a}")
    if(NOT num)
      continue()
    endif()
    if(num LESS GPUPROBE_MIN_ARCH)
      message(FATAL_ERROR "gpuprobe: compute capability sm_${num} is not supported (its kernels need "
                          "sm_${GPUPROBE_MIN_ARCH} or newer). Pass -DCMAKE_CUDA_ARCHITECTURES=<list> "
                          "with supported capabilities.")
    endif()
    if(NOT num IN_LIST GPUPROBE_COMPILED_ARCHS)
      string(REPLACE ";" ", " compiled "${GPUPROBE_COMPILED_ARCHS}")
      message(WARNING "gpuprobe: sm_${num} is neither compiled by CI (${compiled}) nor tested (sm_90); "
                      "its figures and tuned kernels are unverified there.")
    endif()
  endforeach()
endfunction()
