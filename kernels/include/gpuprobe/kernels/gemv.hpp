// GEMV, column-major as BLAS: y = alpha op(A) x + beta y, A stored m x n (lda >= max(1, m)),
// op(A) = A (trans = kNoTrans: x has n elements, y has m) or A^T (kTrans: x has m, y has n).
//
// BLAS semantics: beta == 0 means y is not read; alpha == 0 means A and x are not read and
// y = beta y; m == 0 or n == 0 returns at once with y untouched (reference BLAS quick return).
// Negative incx/incy are allowed, as in reference BLAS. Every argument is checked before anything
// is launched; a bad one returns an error Status and nothing runs.
// Allocation: A must be readable as lda x n elements (one more than reference BLAS needs when m is
// not a multiple of 16 bytes / sizeof(T)): the 16-byte-load path reads a column's last vector
// whole and discards the rows past m, so the last column may be read up to row lda - 1.
//
// Design (docs/perf/gemv.md), after Abdelfattah, Keyes & Ltaief's GEMV: 256-thread blocks, 16-byte
// loads, each warp reading a contiguous 512-byte piece of a column, several loads in flight per
// thread. kNoTrans: a block owns 32x16B rows and a segment of the columns and accumulates row sums
// in registers; kTrans: a block owns 32 columns and a segment of the rows and accumulates column
// dots. When the blocks of whole rows (columns) are too few to fill the GPU, the other dimension is
// cut into segments whose partial results go to the workspace and a second kernel sums them in a
// fixed order (deterministic).
//
// Workspace: queried with gemv_workspace_bytes (0 when no split is needed), allocated once by the
// caller (device memory, 16-byte aligned); not to be shared by concurrent calls.
//
// Implementations: one record each in kGemvImpls below, from which gemv_impl_name(), what
// gemv_auto_impl() returns for an explicit choice, the dispatch of gemv(), the benchmark entries and
// the tests' lists of implementations derive (docs/perf/gemv.md). kAuto (the default) picks one of
// the others by shape; every other record is a choice kAuto makes at some shape:
//   kSplitReduce       the design above: when split, partials to the workspace and a second kernel
//                      (launched as a programmatic dependent) sums them.
//   kSinglePass        one kernel per call: the last block of a unit to finish (an arrival counter in
//                      the workspace) sums the unit's segment partials in a fixed order, in two levels
//                      when there are many segments (deterministic: the order does not depend on which
//                      block arrives last). Block shapes for the thin cases: 16 row lanes for m <= 64
//                      (float) / 32 (double) rows, 4 row vectors per thread for tall matrices with few
//                      columns and for N from 32768 x 8192; lda not a multiple of 16 bytes: each scalar
//                      load is coalesced (consecutive lanes, consecutive elements). A is read with
//                      evict-first loads (ld.global.cs) when the matrix is larger than the L2: it is
//                      streamed once and so leaves the L2's other contents (and their dirty lines) in
//                      place. kTrans blocks are dispatched segment first, so the blocks resident
//                      together read consecutive row segments of the same columns. Deep shape: when y
//                      has 96 ... 264 units of 32 outputs (about one wave of one or two blocks per SM)
//                      and the reduced dimension is >= 2048, no split: each block reads whole rows (N)
//                      / columns (T) of its 32 outputs, 16 loads in flight per thread, and writes y (no
//                      workspace); N with 96 ... 191 units (the 4096 squares: one block per SM) in
//                      blocks of 1024 threads with 8 16-byte loads each, or, on the scalar path (lda
//                      not a multiple of 16 bytes), of 512 threads with 16 loads, read without the
//                      evict-first hint.
//   kColumnBlocks      kTrans: cuBLAS's DGEMV T design as Nsight Compute shows it (32768 x 32768): one
//                      block of 128 threads per column of A (y element), no split, no workspace; the
//                      block reads its column top to bottom (8 KB a step: 4 x 16-byte loads per thread,
//                      coalesced scalar loads when lda is not a multiple of 16 bytes; evict-first when
//                      A is larger than the L2, as kSinglePass), dots it with x (16-byte loads of x
//                      when incx == 1 and x is 16-byte aligned), reduces by warp shuffles and then over
//                      the 4 warps in a fixed order (deterministic), and writes y[col]; columns of 8192
//                      rows or more in steps of 16 KB (8 loads per thread, 4 blocks per SM). kNoTrans
//                      runs kSinglePass (same kernels, same workspace).
//   kRowBlocks         kNoTrans: the mirror of kColumnBlocks, one 256-thread block per 64 bytes of
//                      every column (16 float / 8 double rows) over all n columns: no split, no
//                      workspace, one kernel; 4 lanes a column, 64 column groups, 8 loads of 16 bytes
//                      in flight per thread; the groups' row sums are added in a fixed order
//                      (deterministic). For the small, L2-resident squares, where kSinglePass's
//                      whole-row blocks (32 rows each) are too few to fill the GPU. kTrans runs
//                      kColumnBlocks.
//   kRowBlocksSector   kRowBlocks with 32-byte pieces (8 float / 4 double rows, 2 lanes a column, 128
//                      column groups): twice the blocks, one sector per column piece.
// The kSinglePass workspace (and kAuto's, which may run it) starts with arrival counters that must
// be zero before its first use: call gemv_workspace_init once after allocating it (and again after a
// failed call, or after the buffer was used for anything else); every completed call leaves them at
// zero. kSplitReduce's partials come after that counter area, so one buffer serves in turn every impl
// and shape it is large enough for (kAuto switches between kSplitReduce and kSinglePass by shape).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "gpuprobe/kernels/blas_types.hpp"

namespace gpuprobe::kernels {

// The implementations with kernels of their own, in enumerator order: the one list from which the
// enumerators after kAuto and the instantiations of their entry points (detail::GemvKernels) derive.
// A new implementation: an entry here, its record in kGemvImpls (same order) and its part in
// kernels/src/gemv_kernels.cuh.
#define GPUPROBE_GEMV_IMPLS_WITH_KERNELS(X) \
  X(kSplitReduce)                           \
  X(kSinglePass)                            \
  X(kColumnBlocks)                          \
  X(kRowBlocks)                             \
  X(kRowBlocksSector)

#define GPUPROBE_GEMV_IMPL_ENUMERATOR(Impl) Impl,
enum class GemvImpl {
  kAuto,  // the default: one of the others by shape (gemv_auto_impl)
  GPUPROBE_GEMV_IMPLS_WITH_KERNELS(GPUPROBE_GEMV_IMPL_ENUMERATOR)
  kEnd,  // not an implementation: one past the last (the table's checks count on it)
};
#undef GPUPROBE_GEMV_IMPL_ENUMERATOR

namespace detail {
template <class T>
struct GemvArgs;  // validated arguments (kernels/src/gemv_common.cuh)

// What an implementation needs for op(A) m x n (m, n > 0, the transposition it runs): its workspace
// and whether the problem fits its grid (a grid dimension over its limit: gemv() returns
// kInvalidValue and launches nothing).
struct GemvPlanSummary {
  std::size_t workspace_bytes;
  bool fits_grid;
};

// An implementation's entry points for element type T: its plan for a shape, and its launch, which
// enqueues one GEMV whose arguments gemv() validated (m, n > 0, alpha != 0, the workspace large
// enough and prepared) and returns the launches' error (cudaSuccess when every launch was accepted).
template <class T>
struct GemvLaunch {
  GemvPlanSummary (*plan)(Trans trans, int m, int n);
  cudaError_t (*launch)(const GemvArgs<T>& args, cudaStream_t stream);
};
struct GemvLaunchers {
  GemvLaunch<float> single;
  GemvLaunch<double> dbl;
  template <class T>
  constexpr const GemvLaunch<T>& of() const {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "GEMV: float or double");
    if constexpr (std::is_same_v<T, float>)
      return single;
    else
      return dbl;
  }
  constexpr int set() const {  // how many of the four entry points are set
    return (single.plan != nullptr) + (single.launch != nullptr) + (dbl.plan != nullptr) + (dbl.launch != nullptr);
  }
};
// The entry points of the implementation kImpl (every GemvImpl but kAuto), defined in
// kernels/src/gemv_kernels.cuh (one part per implementation) and instantiated there: float in gemv.cu,
// double in gemv_double.cu (two translation units compile in parallel).
template <GemvImpl kImpl>
struct GemvKernels {
  template <class T>
  static GemvPlanSummary plan(Trans trans, int m, int n);
  template <class T>
  static cudaError_t launch(const GemvArgs<T>& args, cudaStream_t stream);
};
template <GemvImpl kImpl>
constexpr GemvLaunchers gemv_launchers() {
  return {{&GemvKernels<kImpl>::template plan<float>, &GemvKernels<kImpl>::template launch<float>},
          {&GemvKernels<kImpl>::template plan<double>, &GemvKernels<kImpl>::template launch<double>}};
}
// The extern declarations keep every unit but gemv.cu / gemv_double.cu from instantiating the entry
// points, whatever takes their address.
#define GPUPROBE_GEMV_KERNEL_ENTRY_POINTS(Prefix, Impl, T)                                  \
  Prefix template GemvPlanSummary GemvKernels<GemvImpl::Impl>::plan<T>(Trans, int, int); \
  Prefix template cudaError_t GemvKernels<GemvImpl::Impl>::launch<T>(const GemvArgs<T>&, cudaStream_t);
#define GPUPROBE_GEMV_KERNELS_EXTERN(Impl)               \
  GPUPROBE_GEMV_KERNEL_ENTRY_POINTS(extern, Impl, float) \
  GPUPROBE_GEMV_KERNEL_ENTRY_POINTS(extern, Impl, double)
GPUPROBE_GEMV_IMPLS_WITH_KERNELS(GPUPROBE_GEMV_KERNELS_EXTERN)
#undef GPUPROBE_GEMV_KERNELS_EXTERN
}  // namespace detail

struct GemvImplRecord {
  GemvImpl impl;
  const char* name;   // unique; gemv_impl_name(), the benchmark entries' impl_resolved tag
  const char* entry;  // unique; the benchmark entries' impl (kernels.gemv/impl:<entry>, paired.gemv)
  // What runs for kNoTrans / kTrans: the implementation itself where it has a kernel of its own for
  // that transposition, else the one whose kernel it borrows (kAuto: itself, resolved by shape).
  GemvImpl no_trans_runs, trans_runs;
  detail::GemvLaunchers launchers;  // none for kAuto
  const char* description;          // one line: what the implementation is

  constexpr GemvImpl runs(Trans trans) const { return trans == Trans::kNoTrans ? no_trans_runs : trans_runs; }
};

inline constexpr GemvImplRecord kGemvImpls[] = {
    {GemvImpl::kAuto, "auto", "ours", GemvImpl::kAuto, GemvImpl::kAuto, {},
     "the default: row blocks, column blocks, single pass or split + reduce by shape (gemv_auto_impl)"},
    {GemvImpl::kSplitReduce, "split_reduce", "ours_v2", GemvImpl::kSplitReduce, GemvImpl::kSplitReduce,
     detail::gemv_launchers<GemvImpl::kSplitReduce>(),
     "256-thread units of whole rows (N) / 32 columns (T); split: partials summed by a second kernel"},
    {GemvImpl::kSinglePass, "single_pass", "ours_v3", GemvImpl::kSinglePass, GemvImpl::kSinglePass,
     detail::gemv_launchers<GemvImpl::kSinglePass>(),
     "one kernel: the last block of a unit sums its partials; thin, tall and deep shapes; evict-first A"},
    {GemvImpl::kColumnBlocks, "column_blocks", "ours_colblocks", GemvImpl::kSinglePass, GemvImpl::kColumnBlocks,
     detail::gemv_launchers<GemvImpl::kColumnBlocks>(),
     "T: one 128-thread block per column of A, no split (cuBLAS's DGEMV T design); N: single pass"},
    {GemvImpl::kRowBlocks, "row_blocks", "ours_rowblocks", GemvImpl::kRowBlocks, GemvImpl::kColumnBlocks,
     detail::gemv_launchers<GemvImpl::kRowBlocks>(),
     "N: one 256-thread block per 64 bytes of every column, no split; T: column blocks"},
    {GemvImpl::kRowBlocksSector, "row_blocks_sector", "ours_rowblocks_sector", GemvImpl::kRowBlocksSector,
     GemvImpl::kColumnBlocks, detail::gemv_launchers<GemvImpl::kRowBlocksSector>(),
     "N: one 256-thread block per 32 bytes (a sector) of every column, no split; T: column blocks"},
};
inline constexpr std::size_t kGemvImplCount = sizeof(kGemvImpls) / sizeof(kGemvImpls[0]);

namespace detail {
// Record i is enumerator i and every enumerator before kEnd has its record; names and entries are
// unique and set; kAuto has no launchers and runs itself, every other record has all four entry
// points, a kernel of its own for at least one transposition and, for the other, borrows that of a
// record which runs itself there. A template over the table so that a test can show it rejects bad ones.
template <std::size_t kCount>
constexpr bool gemv_impl_table_is_consistent(const GemvImplRecord (&table)[kCount]) {
  if (kCount != static_cast<std::size_t>(GemvImpl::kEnd)) return false;
  for (std::size_t i = 0; i < kCount; ++i) {
    const GemvImplRecord& r = table[i];
    if (static_cast<std::size_t>(r.impl) != i || r.name == nullptr || r.name[0] == '\0' || r.entry == nullptr ||
        r.entry[0] == '\0' || r.description == nullptr || r.description[0] == '\0')
      return false;
    const bool is_auto = r.impl == GemvImpl::kAuto;
    if (r.launchers.set() != (is_auto ? 0 : 4)) return false;
    bool own_kernel = false;
    const Trans both[] = {Trans::kNoTrans, Trans::kTrans};
    for (Trans t : both) {
      const auto runs = static_cast<std::size_t>(r.runs(t));
      if (runs >= kCount || (runs == static_cast<std::size_t>(GemvImpl::kAuto)) != is_auto ||
          table[runs].runs(t) != r.runs(t))
        return false;
      own_kernel = own_kernel || r.runs(t) == r.impl;
    }
    if (!own_kernel) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (same_text(table[j].name, r.name) || same_text(table[j].entry, r.entry)) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::gemv_impl_table_is_consistent(kGemvImpls),
              "kGemvImpls: one record per GemvImpl enumerator, in enumerator order, names unique, launchers "
              "for all but kAuto");

// The record of `impl`; nullptr for a value that names no implementation.
constexpr const GemvImplRecord* gemv_impl_record(GemvImpl impl) {
  const auto i = static_cast<std::size_t>(impl);
  return i < kGemvImplCount ? &kGemvImpls[i] : nullptr;
}

// The record's name; "unknown" for a value that names no implementation.
const char* gemv_impl_name(GemvImpl impl);

// What gemv<T> runs for `impl` (T = float or double): the record's runs(trans) (kColumnBlocks with
// kNoTrans -> kSinglePass, row blocks with kTrans -> kColumnBlocks, the others themselves), and for
// kAuto:
//   - kNoTrans with A of at most 8 MiB, at most 1024 columns and not thin (below): row blocks of 8
//     rows, kRowBlocksSector in float and kRowBlocks in double;
//   - kTrans with columns of more than 2048 bytes (m sizeof(T) > 2048: m > 512 in float, m > 256 in
//     double) and n >= 512: kColumnBlocks (bytes, not rows, decide: with columns of 2 KB or less it
//     loses to the others);
//   - else kSinglePass when A is thin (at most 512 rows or columns and at least 64 x as many of the
//     other), large (m n >= 2^26 elements: 256 MiB in float) or deep for this `trans` (y in units of
//     32 gives 96 ... 264 units, with >= 2048 reduced: the one-kernel shapes, e.g. the 3041 ... 8448
//     squares), or small N with more than 1024 columns (A of at most 4 MiB);
//   - kSplitReduce otherwise.
// Each rule is the faster of the measured choices at the benchmark shapes (docs/perf/gemv.md). A value
// that names no implementation is returned as it is (gemv_check_args refuses it).
template <class T>
GemvImpl gemv_auto_impl(Trans trans, int m, int n, GemvImpl impl = GemvImpl::kAuto);

// Bytes of workspace gemv<T>(trans, m, n, ..., impl) needs; 0 for an empty problem or when not split.
template <class T>
std::size_t gemv_workspace_bytes(Trans trans, int m, int n, GemvImpl impl = GemvImpl::kAuto);

// Checks the arguments only (no CUDA call): kSuccess, kInvalidValue, kNullPointer or
// kWorkspaceTooSmall, in that order of precedence.
template <class T>
Status gemv_check_args(Trans trans, int m, int n, const T* A, int lda, const T* x, int incx, const T* y, int incy,
                       const void* workspace, std::size_t workspace_bytes, GemvImpl impl = GemvImpl::kAuto);

// Enqueues y = alpha op(A) x + beta y on `stream` (T = float or double).
template <class T>
Status gemv(Trans trans, int m, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta, T* y, int incy,
            void* workspace, std::size_t workspace_bytes, cudaStream_t stream,
            GemvImpl impl = GemvImpl::kAuto);

// Prepares a workspace for kSinglePass (and kAuto, which may run it): zeroes its counter area (a cudaMemsetAsync
// of at most its first 16 KiB on `stream`). Needed once per buffer, not per call; harmless for the
// other implementations. kSuccess for an empty workspace (nullptr, 0 bytes), kNullPointer for nullptr
// with bytes > 0, kLaunchFailed if the memset could not be enqueued.
Status gemv_workspace_init(void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace gpuprobe::kernels
