// SYMV, column-major as BLAS: y = alpha A x + beta y, A symmetric n x n with only the `uplo`
// triangle stored (the other triangle is never read: it may hold anything, NaN included).
//
// BLAS semantics: beta == 0 means y is not read (NaN or garbage in y does not propagate); alpha == 0
// means A and x are not read and y = beta y; n == 0 returns at once. Negative incx/incy are allowed
// (element i of x is at x[(incx > 0 ? i : i - (n - 1)) * incx], as in reference BLAS). Every argument
// is checked before anything is launched; a bad one returns an error Status and nothing runs.
// Allocation: A must be readable as lda x n elements (the 16-byte-load path reads a column's last
// vector whole and discards the rows past n, so the last column may be read up to row lda - 1).
//
// Implementations: one record each in kSymvImpls below, from which symv_impl_name(), the dispatch of
// symv(), the benchmark entries and the tests' lists of implementations derive (docs/perf/symv.md).
// The product keeps what kAuto (the default) reaches and the baselines the report compares against:
//   kAwareV6    storage-aware ("algorithm 2" of Abdelfattah, Keyes & Ltaief, MAGMA SYMV), deterministic:
//               64 x 64 tiles; a thread block owns a group of 4 (float) / 2 (double) block rows and a
//               segment of block columns anchored at absolute column positions (1 KB of each column per
//               step), uses every off-diagonal element twice, as A x (row sums) and A^T x (column dots),
//               and writes one row partial per unit and one column-dot partial per block column and
//               unit; a second kernel (a programmatic dependent) sums them in a fixed order. Reads
//               n(n+1)/2 elements, with evict-first loads (ld.global.cs) when the triangle is larger
//               than the L2, so that the partials stay there for the reduction. The grid is walked
//               group first: the blocks launched together are vertically adjacent pieces of the same
//               block columns.
//   kAwareV5    kAwareV6 with groups of 4 block rows in double too (read in two batches of 2 per
//               step, one block of 8 warps per SM): half the column-dot partials. Float: kAwareV6.
//   kOblivious  baseline, storage-oblivious ("algorithm 1"): each block row is computed whole, the tiles
//               above (below) the diagonal read as the transposes of the stored ones: reads n^2
//               elements; row partials summed by a second kernel in a fixed order.
//   kAwareAtomic baseline: storage-aware with units of one block row, partials added straight into y
//               with atomicAdd (y first set to beta y by a small kernel): no workspace, not
//               deterministic (the summation order varies).
//   kAuto       (default) kAwareV6, or kAwareV5 (symv_auto_impl below).
// Variants studied on the way (one block row per unit with deterministic partials, the segment-first
// grid order, plain loads of A) live in lab/blas2_variants/, outside the library.
//
// Workspace: queried with symv_workspace_bytes, allocated once by the caller (device memory, any
// content, 16-byte aligned), at most 1 % of the n x n matrix for n >= 1024 (kAwareAtomic needs 0
// bytes). The workspace may not be shared by calls running concurrently.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels {

// A new implementation: an enumerator here (before kEnd) and its record in kSymvImpls, same order.
enum class SymvImpl {
  kAuto,  // the default: kAwareV6 or kAwareV5 (symv_auto_impl)
  kAwareV5,
  kAwareV6,
  kOblivious,    // baseline
  kAwareAtomic,  // baseline
  kEnd,          // not an implementation: one past the last (the table's checks count on it)
};

namespace detail {
template <class T>
struct SymvArgs;  // validated arguments (kernels/src/symv_internal.cuh)

// An implementation's entry points for element type T: its workspace at n (n > 0), and its launch,
// which enqueues one SYMV whose arguments symv_with_launch validated and returns the launches' error
// (cudaSuccess when every launch was accepted).
template <class T>
struct SymvLaunch {
  std::size_t (*workspace_bytes)(int n);
  cudaError_t (*launch)(const SymvArgs<T>& args, cudaStream_t stream);
};
struct SymvLaunchers {
  SymvLaunch<float> single;
  SymvLaunch<double> dbl;
  template <class T>
  constexpr const SymvLaunch<T>& of() const {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "SYMV: float or double");
    if constexpr (std::is_same_v<T, float>)
      return single;
    else
      return dbl;
  }
  constexpr int set() const {  // how many of the four entry points are set
    return (single.workspace_bytes != nullptr) + (single.launch != nullptr) + (dbl.workspace_bytes != nullptr) +
           (dbl.launch != nullptr);
  }
};
// The launchers of an implementation whose entry points are the static member templates
// Kernels::workspace_bytes<T> and Kernels::launch<T> (the product's: defined and instantiated in
// kernels/src/symv.cu; the lab defines its own the same way).
template <class Kernels>
constexpr SymvLaunchers symv_launchers() {
  return {{&Kernels::template workspace_bytes<float>, &Kernels::template launch<float>},
          {&Kernels::template workspace_bytes<double>, &Kernels::template launch<double>}};
}
#define GPUPROBE_SYMV_KERNELS(Name)                                          \
  struct Name {                                                              \
    template <class T>                                                       \
    static std::size_t workspace_bytes(int n);                               \
    template <class T>                                                       \
    static cudaError_t launch(const SymvArgs<T>& args, cudaStream_t stream); \
  };
GPUPROBE_SYMV_KERNELS(SymvAwareV5Kernels)
GPUPROBE_SYMV_KERNELS(SymvAwareV6Kernels)
GPUPROBE_SYMV_KERNELS(SymvObliviousKernels)
GPUPROBE_SYMV_KERNELS(SymvAwareAtomicKernels)
#undef GPUPROBE_SYMV_KERNELS
}  // namespace detail

struct SymvImplRecord {
  SymvImpl impl;
  const char* name;   // unique; symv_impl_name(), the benchmark entries' impl_resolved tag
  const char* entry;  // unique; the benchmark entries' impl (kernels.symv/impl:<entry>)
  bool baseline;      // kept for the report's comparisons; kAuto never runs it
  bool atomics;       // partials added into y with atomicAdd: repeated calls may differ in the last bits
  detail::SymvLaunchers launchers;  // none for kAuto
  const char* description;          // one line: what the implementation is
};

inline constexpr SymvImplRecord kSymvImpls[] = {
    {SymvImpl::kAuto, "auto", "ours", false, false, {},
     "the default: aware_v6, or aware_v5 in double when v6's partials would fill more than half the L2"},
    {SymvImpl::kAwareV5, "aware_v5", "ours_aware_v5", false, false,
     detail::symv_launchers<detail::SymvAwareV5Kernels>(),
     "aware, groups of 4 block rows in float and double (double: one block per SM), group-first grid"},
    {SymvImpl::kAwareV6, "aware_v6", "ours_aware_v6", false, false,
     detail::symv_launchers<detail::SymvAwareV6Kernels>(),
     "aware, groups of 4 (float) / 2 (double) block rows, group-first grid, evict-first A beyond the L2"},
    {SymvImpl::kOblivious, "oblivious", "ours_oblivious", true, false,
     detail::symv_launchers<detail::SymvObliviousKernels>(),
     "storage-oblivious baseline: whole block rows, the unstored half read as mirrored tiles (n^2 reads)"},
    {SymvImpl::kAwareAtomic, "aware_atomic", "ours_atomic", true, true,
     detail::symv_launchers<detail::SymvAwareAtomicKernels>(),
     "aware baseline with atomicAdd partials into y: one block row per unit, no workspace"},
};
inline constexpr std::size_t kSymvImplCount = sizeof(kSymvImpls) / sizeof(kSymvImpls[0]);

namespace detail {
// Record i is enumerator i and every enumerator before kEnd has its record; names and entries are
// unique and set; kAuto has no launchers and is neither a baseline nor atomic, every other record has
// all four entry points; at least one record is kAuto's to choose (neither kAuto nor a baseline). A
// template over the table so that a test can show it rejects bad ones.
template <std::size_t kCount>
constexpr bool symv_impl_table_is_consistent(const SymvImplRecord (&table)[kCount]) {
  if (kCount != static_cast<std::size_t>(SymvImpl::kEnd)) return false;
  bool choice = false;
  for (std::size_t i = 0; i < kCount; ++i) {
    const SymvImplRecord& r = table[i];
    if (static_cast<std::size_t>(r.impl) != i || r.name == nullptr || r.name[0] == '\0' || r.entry == nullptr ||
        r.entry[0] == '\0' || r.description == nullptr || r.description[0] == '\0')
      return false;
    const bool is_auto = r.impl == SymvImpl::kAuto;
    if (r.launchers.set() != (is_auto ? 0 : 4) || (is_auto && (r.baseline || r.atomics))) return false;
    choice = choice || (!is_auto && !r.baseline);
    for (std::size_t j = 0; j < i; ++j)
      if (same_text(table[j].name, r.name) || same_text(table[j].entry, r.entry)) return false;
  }
  return choice;
}
}  // namespace detail
static_assert(detail::symv_impl_table_is_consistent(kSymvImpls),
              "kSymvImpls: one record per SymvImpl enumerator, in enumerator order, names unique, launchers "
              "for all but kAuto");

// The record of `impl`; nullptr for a value that names no implementation.
constexpr const SymvImplRecord* symv_impl_record(SymvImpl impl) {
  const auto i = static_cast<std::size_t>(impl);
  return i < kSymvImplCount ? &kSymvImpls[i] : nullptr;
}

// The record's name; "unknown" for a value that names no implementation.
const char* symv_impl_name(SymvImpl impl);

// What symv<T> runs for `impl` on a device whose L2 holds l2_bytes (-1: ask the current device; 0:
// unknown): `impl` itself, except kAuto -> kAwareV6, or kAwareV5 in double when kAwareV6's partials
// (its workspace) would fill more than half the L2 (one of the H100's two partitions): v5's groups of
// 4 block rows halve the column-dot partials, so that the reduction kernel reads them from the L2
// rather than from DRAM. Where v6's partials fit, v6 was the faster (docs/perf/symv.md, "The default").
template <class T>
SymvImpl symv_auto_impl(Uplo uplo, int n, SymvImpl impl = SymvImpl::kAuto, long long l2_bytes = -1);

// Bytes of workspace symv<T>(..., n, ..., impl) needs; 0 for n <= 0 or an `impl` that names no
// implementation. kAuto: the largest of those kAuto may run (what it runs depends on the device's L2;
// the workspace it needs does not).
template <class T>
std::size_t symv_workspace_bytes(int n, SymvImpl impl = SymvImpl::kAuto);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue, kNullPointer or
// kWorkspaceTooSmall, in that order of precedence.
template <class T>
Status symv_check_args(Uplo uplo, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes, SymvImpl impl = SymvImpl::kAuto);

// Enqueues y = alpha A x + beta y on `stream` (T = float or double). Returns kInvalidValue for an
// `impl` that names no implementation, kLaunchFailed if a launch itself failed (asynchronous faults
// surface at the caller's next synchronizing call).
template <class T>
Status symv(Uplo uplo, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream, SymvImpl impl = SymvImpl::kAuto);

}  // namespace gpuprobe::kernels
