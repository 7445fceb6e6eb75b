# cmake -DSOURCE_DIR=<repo> -P tests/cmake/cuda_toolkit_test.cmake: the configure step's toolkit rules
# (cmake/cuda_toolkit.cmake) on versions and header folders this machine does not have.
include(${SOURCE_DIR}/cmake/cuda_toolkit.cmake)

set(failures 0)
macro(expect what got want)
  if(NOT "${got}" STREQUAL "${want}")
    message(SEND_ERROR "${what}: got '${got}', want '${want}'")
    math(EXPR failures "${failures} + 1")
  endif()
endmacro()
macro(expect_match what got regex)
  if(NOT "${got}" MATCHES "${regex}")
    message(SEND_ERROR "${what}: '${got}' does not match '${regex}'")
    math(EXPR failures "${failures} + 1")
  endif()
endmacro()

# Supported toolkits: nothing to say.
gpuprobe_cuda_toolkit_problem(13.0.88 "90" p)
expect("13.0 for sm_90" "${p}" "")
gpuprobe_cuda_toolkit_problem(12.4.131 "80;86;89;90" p)
expect("12.4 for Ampere, Ada and Hopper" "${p}" "")
gpuprobe_cuda_toolkit_problem(12.8.93 "80;86;89;90;100;120" p)
expect("12.8 for every architecture" "${p}" "")
# Below the oldest supported toolkit: one line, naming the version needed.
gpuprobe_cuda_toolkit_problem(12.3.107 "90" p)
expect_match("12.3 refused" "${p}" "^gpuprobe: CUDA 12.3.107 is too old: gpuprobe needs CUDA 12.4 or newer")
expect_match("one line" "${p}" "^[^\n]*$")
gpuprobe_cuda_toolkit_problem(11.8.89 "80" p)
expect_match("11.8 refused" "${p}" "too old")
# A supported toolkit too old for one requested architecture: that architecture is named.
gpuprobe_cuda_toolkit_problem(12.6.85 "90;100" p)
expect_match("12.6 cannot build sm_100" "${p}" "cannot compile for sm_100 .it needs CUDA 12.8 or newer.; pass")
gpuprobe_cuda_toolkit_problem(12.6.85 "120-real" p)
expect_match("12.6 cannot build sm_120-real" "${p}" "sm_120")
# Names CMake resolves itself are left alone.
gpuprobe_cuda_toolkit_problem(12.4.131 "native" p)
expect("native" "${p}" "")

# The Range Profiling API: both headers must be there (CUPTI 12.6.68 had the host header only).
set(tmp ${CMAKE_CURRENT_BINARY_DIR}/cuda_toolkit_test_headers)
file(REMOVE_RECURSE ${tmp})
file(WRITE ${tmp}/host_only/cupti_profiler_host.h "")
file(WRITE ${tmp}/both/cupti_profiler_host.h "")
file(WRITE ${tmp}/both/cupti_range_profiler.h "")
file(MAKE_DIRECTORY ${tmp}/none)
gpuprobe_have_cupti_range_profiler("${tmp}/none" have)
expect("no CUPTI profiler headers" "${have}" "OFF")
gpuprobe_have_cupti_range_profiler("${tmp}/host_only" have)
expect("host header only (CUPTI 12.6.37 and 12.6.68)" "${have}" "OFF")
gpuprobe_have_cupti_range_profiler("${tmp}/none;${tmp}/both" have)
expect("range profiler in the second folder" "${have}" "ON")
file(REMOVE_RECURSE ${tmp})

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} check(s) failed")
endif()
message(STATUS "cuda_toolkit.cmake: every check passed")
