// Multi-GPU SYMV (symv_mgpu.hpp): per GPU the storage-aware kernel on its own block columns, a
// fixed-order reduction into the GPU's partial y, then the cross-GPU sum (P2P or NCCL).
// Plan (which tiles, masks, partials): symv_mgpu_plan.hpp. Design: docs/perf/symv_mgpu.md.
//
// The per-GPU kernel follows the single-GPU v3/v5/v6 kernels (symv_v3.cuh): 256-thread units of `sub`
// row tiles (float 4; double 2, or 4 when the partials would not stay in the L2, as kAuto picks v5
// over v6) x a segment of 64-column tiles, each thread kColsPerThread 16-byte loads per tile and
// sub-row (16 in flight per step), the grid walked group first so that the blocks running together
// stream the same columns top to bottom, evict-first loads when the local triangle exceeds the L2.
// What differs: the columns are the GPU's local columns (local tile J = 64 consecutive local columns,
// whose global indices may jump by (G - 1) b), so a tile's relation to the diagonal is decided per
// column: masked steps keep, per column, the row range that is stored and inside the submatrix
// (selection, so NaN outside never enters), and drop the diagonal element from the column dots.
// All column dots go to per-tile slots (their y elements are the tile's global columns, anywhere).
#include <algorithm>

#include "gpuprobe/kernels/kernel_descriptors.hpp"
#include "gpuprobe/kernels/symv_mgpu.hpp"
#include "mgpu_internal.cuh"
#include "symv_gemv_common.cuh"
#include "symv_mgpu_plan.hpp"

namespace gpuprobe::kernels {
namespace {

using blas2::Strided;
using blas2::Vec16;
using symv_mgpu_plan::kNB;
using symv_mgpu_plan::Plan;

constexpr int kThreads = 256;

template <class T>
struct Shape {
  static constexpr int kV = Vec16<T>::kCount;              // rows per lane (one 16-byte load)
  static constexpr int kRowLanes = kNB / kV;               // 16 (float), 32 (double)
  static constexpr int kColGroups = kThreads / kRowLanes;  // 16, 8
  static constexpr int kColsPerThread = kNB / kColGroups;  // 4, 8
  static_assert(kRowLanes * kV == kNB && kRowLanes * kColGroups == kThreads && kColGroups * kColsPerThread == kNB,
                "a unit's threads cover a 64 x 64 tile");
  static_assert(32 % kRowLanes == 0, "a column's row lanes lie inside one warp (shuffle reduction)");
};

// Sub-rows whose loads are issued together: 16 16-byte loads per thread (float 4 x 4 columns,
// double 2 x 8); double with sub = 4 reads in two batches.
template <class T>
constexpr int load_rows_per_batch() {
  return sizeof(T) == 4 ? 4 : 2;
}
// Blocks per SM the registers are capped for: 2 (128 registers), 1 for double with sub = 4 (its
// row sums of 4 sub-rows spill at 128 registers; symv_v3.cuh).
template <class T, int kSub>
constexpr int min_blocks_per_sm() {
  return sizeof(T) == 8 && kSub == 4 ? 1 : 2;
}

// Loads the kV elements p[0..kV) of a column, keeping those with lo <= k < hi and zeroing the rest by
// selection (nothing read when none is kept). kVector: one 16-byte load (p 16-byte aligned, and the
// vector inside the column: ldl a multiple of kV).
template <class T, bool kVector, bool kStream>
__device__ __forceinline__ void load_rows_in(const T* p, int lo, int hi, T (&out)[Vec16<T>::kCount]) {
  constexpr int kV = Vec16<T>::kCount;
  if constexpr (kVector) {
    typename Vec16<T>::type v{};
    if (lo < kV && hi > 0 && lo < hi) v = blas2::load_vec16<T, kStream>(p);
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int k = 0; k < kV; ++k) out[k] = k >= lo && k < hi ? e[k] : T(0);
  } else {
#pragma unroll
    for (int k = 0; k < kV; ++k) out[k] = k >= lo && k < hi ? blas2::load_elem<T, kStream>(p + k) : T(0);
  }
}

// One local tile column J of a unit of group h: kSub tiles stacked, row sums into row_acc, column
// dots to the slot (h, J). kMasked: any tile (per column, the stored rows of the submatrix; the
// diagonal out of the column dots); else a full tile of an unclipped group (no mask at all).
// rows0: the thread's first row (sub-row 0) as a global row index; a_rows: A at that row, column 0.
template <class T, int kSub, bool kLower, bool kVector, bool kStream, bool kMasked>
__device__ __forceinline__ void tile_step(const Plan& plan, const T* __restrict__ a_rows, long long ldl,
                                          const T* __restrict__ xcol, int h, int J, int lane, int grp, int rows0,
                                          int row_lo, int row_hi, const T (&xs)[kSub * kNB],
                                          T (&row_acc)[kSub][Vec16<T>::kCount], T* __restrict__ slots) {
  using S = Shape<T>;
  constexpr int kV = S::kV, kCG = S::kColGroups, kCPT = S::kColsPerThread, kRL = S::kRowLanes;
  constexpr int kBatch = load_rows_per_batch<T>();
  static_assert(kSub % kBatch == 0, "a group is read in whole load batches");
  const int lj0 = J * kNB + grp;  // the thread's column u = 0, relative local index
  const T* p = a_rows + static_cast<long long>(plan.lc0 + lj0) * ldl;

  // Masked: per column u, the kept rows [lo, hi) and the diagonal row, relative to rows0.
  [[maybe_unused]] int lo[kCPT], hi[kCPT], diag[kCPT];
  if constexpr (kMasked) {
#pragma unroll
    for (int u = 0; u < kCPT; ++u) {
      const int lj = lj0 + u * kCG;
      lo[u] = hi[u] = 0;
      diag[u] = -1;
      if (lj < plan.nl) {
        const int c = plan.col_global(lj);
        lo[u] = (kLower ? max(row_lo, c) : row_lo) - rows0;
        hi[u] = (kLower ? row_hi : min(row_hi, c + 1)) - rows0;
        diag[u] = c - rows0;
      }
    }
  }

  T xc[kCPT];
  T dot[kCPT];
#pragma unroll
  for (int i0 = 0; i0 < kSub; i0 += kBatch) {
    T a[kBatch][kCPT][kV];
#pragma unroll
    for (int u = 0; u < kCPT; ++u)
#pragma unroll
      for (int ii = 0; ii < kBatch; ++ii) {
        const T* pe = p + u * kCG * ldl + (i0 + ii) * kNB;
        if constexpr (kMasked)
          load_rows_in<T, kVector, kStream>(pe, lo[u] - (i0 + ii) * kNB, hi[u] - (i0 + ii) * kNB, a[ii][u]);
        else
          blas2::load_rows<T, kVector, kStream>(pe, kV, a[ii][u]);
      }
    if (i0 == 0)  // x at the tile's columns, with the first batch's loads in flight
#pragma unroll
      for (int u = 0; u < kCPT; ++u) xc[u] = !kMasked || lj0 + u * kCG < plan.nl ? __ldg(&xcol[lj0 + u * kCG]) : T(0);

#pragma unroll
    for (int ii = 0; ii < kBatch; ++ii)
#pragma unroll
      for (int u = 0; u < kCPT; ++u)
#pragma unroll
        for (int k = 0; k < kV; ++k) row_acc[i0 + ii][k] += a[ii][u][k] * xc[u];
    if constexpr (kMasked) {  // a diagonal element counts once, in the row sums
#pragma unroll
      for (int ii = 0; ii < kBatch; ++ii)
#pragma unroll
        for (int u = 0; u < kCPT; ++u)
#pragma unroll
          for (int k = 0; k < kV; ++k)
            if ((i0 + ii) * kNB + k == diag[u]) a[ii][u][k] = T(0);
    }
#pragma unroll
    for (int ii = 0; ii < kBatch; ++ii) {
      const int i = i0 + ii;
      using V = typename Vec16<T>::type;  // x at this thread's kV rows of sub-row i: one 16-byte LDS
      const V xv = *reinterpret_cast<const V*>(&xs[i * kNB + lane * kV]);
      const T* xr = reinterpret_cast<const T*>(&xv);
#pragma unroll
      for (int u = 0; u < kCPT; ++u)
#pragma unroll
        for (int k = 0; k < kV; ++k) dot[u] = i == 0 && k == 0 ? a[ii][u][k] * xr[k] : dot[u] + a[ii][u][k] * xr[k];
    }
  }
  const T sum = blas2::reduce_transposed<kCPT, kRL>(dot, lane);
  constexpr int kLanesPerValue = kRL / kCPT;
  if (lane % kLanesPerValue == 0) slots[plan.slot(h, J) + grp + (lane / kLanesPerValue) * kCG] = sum;
}

template <class T, int kSub, bool kLower, bool kVector, bool kStream>
__global__ void __launch_bounds__(kThreads, min_blocks_per_sm<T, kSub>())
    symv_mgpu_kernel(Plan plan, const T* __restrict__ A, long long ldl, Strided<const T> x,
                     const T* __restrict__ xcol, T* __restrict__ slots, T* __restrict__ row_parts) {
  using S = Shape<T>;
  constexpr int kV = S::kV, kCG = S::kColGroups, kRL = S::kRowLanes;
  static_assert(kSub * kNB <= kThreads, "the epilogue writes one row-part element per thread");
  const int h = blockIdx.x, k = blockIdx.y;  // group fastest: blocks running together share columns
  int jb, je;
  plan.unit_tiles(h, k, &jb, &je);
  if (jb >= je) return;  // uniform over the block
  blas2::allow_dependent_launch();

  const int lane = threadIdx.x % kRL, grp = threadIdx.x / kRL;
  const int r0 = plan.group_row0(h), row_lo = plan.row_lo(h), row_hi = plan.row_hi(h);
  // x at the group's rows (the column dots), zero outside the submatrix.
  __shared__ __align__(16) T xs[kSub * kNB];
  for (int e = threadIdx.x; e < kSub * kNB; e += kThreads) {
    const int i = r0 + e;
    xs[e] = i >= row_lo && i < row_hi ? blas2::load_x(x, i - plan.offset) : T(0);
  }
  __syncthreads();
  T row_acc[kSub][kV] = {};
  const int rows0 = r0 + lane * kV;
  const T* a_rows = A + rows0;

  // Full, whole tiles of an unclipped group need no mask: [ib, ie); the others, before and after.
  int ib = max(jb, plan.full_begin(h)), ie = min(je, min(plan.full_end(h), plan.nl / kNB));
  if (plan.rows_clipped(h) || ib >= ie) ib = ie = je;
  for (int J = jb; J < ib; ++J)
    tile_step<T, kSub, kLower, kVector, kStream, true>(plan, a_rows, ldl, xcol, h, J, lane, grp, rows0, row_lo, row_hi,
                                                       xs, row_acc, slots);
  for (int J = ib; J < ie; ++J)
    tile_step<T, kSub, kLower, kVector, kStream, false>(plan, a_rows, ldl, xcol, h, J, lane, grp, rows0, row_lo,
                                                        row_hi, xs, row_acc, slots);
  for (int J = ie; J < je; ++J)
    tile_step<T, kSub, kLower, kVector, kStream, true>(plan, a_rows, ldl, xcol, h, J, lane, grp, rows0, row_lo, row_hi,
                                                       xs, row_acc, slots);

  // The unit's row part: the row sums summed over the column groups in group order.
  __shared__ T row_part[kCG][kSub * kNB];
#pragma unroll
  for (int i = 0; i < kSub; ++i)
#pragma unroll
    for (int q = 0; q < kV; ++q) row_part[grp][i * kNB + lane * kV + q] = row_acc[i][q];
  __syncthreads();
  const int e = threadIdx.x;
  if (e < kSub * kNB) {
    T sum = row_part[0][e];
#pragma unroll
    for (int q = 1; q < kCG; ++q) sum += row_part[q][e];
    row_parts[plan.row_part(h, k) + e] = sum;
  }
}

// out_e = alpha (the partials of output e) + beta out_e (beta == 0: out not read), e < n: the row
// parts of e's group (its nonempty segments in order), then, if the GPU owns column o + e, the
// slots of that column's tile (groups in order). 8 groups of terms x 32 elements per block, each
// thread with kReduceAcc independent sums; the association is fixed (bit-identical repeats).
constexpr int kReduceElems = 32;
constexpr int kReduceGroups = kThreads / kReduceElems;
constexpr int kReduceAcc = 4;

template <class T>
__global__ void __launch_bounds__(kThreads) symv_mgpu_reduce_kernel(Plan plan, const T* __restrict__ slots,
                                                                    const T* __restrict__ row_parts, T alpha, T beta,
                                                                    Strided<T> out) {
  const int e = blockIdx.x * kReduceElems + threadIdx.x % kReduceElems;
  const int q = threadIdx.x / kReduceElems;
  blas2::grid_dependency_wait();  // launched early (PDL): the partials are complete only after this
  T acc[kReduceAcc] = {};
  if (e < plan.n) {
    const int i = plan.offset + e;
    const int h = plan.group_of_row(i);
    const int e_in_group = i - plan.group_row0(h);
    const int s0 = plan.first_segment(h), row_terms = plan.end_segment(h) - s0;
    int J = 0, col = 0, h0 = 0, slot_terms = 0;
    if (plan.layout.owner(i) == plan.gpu) {
      const int lj = plan.layout.local_col(i) - plan.lc0;
      J = lj / kNB;
      col = lj % kNB;
      h0 = plan.slot_group_begin(J);
      slot_terms = plan.slot_group_end(J) - h0;
    }
    const int terms = row_terms + slot_terms;
    for (int t0 = q; t0 < terms; t0 += kReduceGroups * kReduceAcc) {
#pragma unroll
      for (int w = 0; w < kReduceAcc; ++w) {
        const int t = t0 + w * kReduceGroups;
        if (t < terms)
          acc[w] += t < row_terms ? row_parts[plan.row_part(h, s0 + t) + e_in_group]
                                  : slots[plan.slot(h0 + t - row_terms, J) + col];
      }
    }
  }
  T sum = acc[0];
#pragma unroll
  for (int w = 1; w < kReduceAcc; ++w) sum += acc[w];
  blas2::sum_groups_into_y<kReduceGroups, kReduceElems>(sum, q, e, e < plan.n, alpha, beta, out);
}

template <class T, int kSub, bool kLower>
void launch_main(const Plan& plan, bool vector, bool stream_a, const T* A, int ldl, Strided<const T> x,
                 const T* xcol, T* slots, T* row_parts, cudaStream_t stream) {
  const dim3 grid(plan.groups, plan.segments);
  if (vector && stream_a)
    symv_mgpu_kernel<T, kSub, kLower, true, true><<<grid, kThreads, 0, stream>>>(plan, A, ldl, x, xcol, slots, row_parts);
  else if (vector)
    symv_mgpu_kernel<T, kSub, kLower, true, false><<<grid, kThreads, 0, stream>>>(plan, A, ldl, x, xcol, slots, row_parts);
  else if (stream_a)
    symv_mgpu_kernel<T, kSub, kLower, false, true><<<grid, kThreads, 0, stream>>>(plan, A, ldl, x, xcol, slots, row_parts);
  else
    symv_mgpu_kernel<T, kSub, kLower, false, false><<<grid, kThreads, 0, stream>>>(plan, A, ldl, x, xcol, slots, row_parts);
}

template <class T, bool kLower>
void launch_main_sub(const Plan& plan, bool vector, bool stream_a, const T* A, int ldl, Strided<const T> x,
                     const T* xcol, T* slots, T* row_parts, cudaStream_t stream) {
  if constexpr (sizeof(T) == 4)
    launch_main<T, 4, kLower>(plan, vector, stream_a, A, ldl, x, xcol, slots, row_parts, stream);
  else if (plan.sub == 4)
    launch_main<T, 4, kLower>(plan, vector, stream_a, A, ldl, x, xcol, slots, row_parts, stream);
  else
    launch_main<T, 2, kLower>(plan, vector, stream_a, A, ldl, x, xcol, slots, row_parts, stream);
}

// Row tiles per unit: float 4; double 2, or 4 when sub = 2's partials would fill more than half the
// L2 (l2_bytes of GPU q's device; 0: unknown, 2), as symv_auto_impl picks v5 over v6.
template <class T>
int sub_rows(const BlockCyclicLayout& layout, int q, bool lower, int n, int offset, long long l2_bytes) {
  if (sizeof(T) == 4) return 4;
  const Plan p = symv_mgpu_plan::make_plan(layout, q, lower, 2, n, offset);
  const double partials = static_cast<double>(p.slot_elems + p.row_part_elems) * sizeof(T);
  return l2_bytes > 0 && partials > 0.5 * static_cast<double>(l2_bytes) ? 4 : 2;
}

// A GPU's workspace: the partial y (at offset 0: the peers read it there), x at its columns, the slots,
// the row parts; sized by the plan (the layout-wide query bounds every plan).
template <class T>
struct Buffers {
  T* partial;
  T* xcol;
  T* slots;
  T* row_parts;
};
template <class T>
Buffers<T> carve(void* workspace, const Plan& p) {
  char* b = static_cast<char*>(workspace);
  Buffers<T> out;
  out.partial = reinterpret_cast<T*>(b);
  b += mgpu::round_bytes(static_cast<std::size_t>(p.n) * sizeof(T));
  out.xcol = reinterpret_cast<T*>(b);
  b += mgpu::round_bytes(static_cast<std::size_t>(p.nl) * sizeof(T));
  out.slots = reinterpret_cast<T*>(b);
  b += mgpu::round_bytes(static_cast<std::size_t>(p.slot_elems) * sizeof(T));
  out.row_parts = reinterpret_cast<T*>(b);
  return out;
}

template <class T>
std::size_t workspace_for(const BlockCyclicLayout& layout, int sub) {
  const symv_mgpu_plan::Bounds b = symv_mgpu_plan::plan_bounds(layout, sub);
  return mgpu::round_bytes(static_cast<std::size_t>(layout.cols) * sizeof(T)) +
         mgpu::round_bytes(static_cast<std::size_t>(b.local_cols) * sizeof(T)) +
         mgpu::round_bytes(static_cast<std::size_t>(b.slot_elems) * sizeof(T)) +
         mgpu::round_bytes(static_cast<std::size_t>(b.row_part_elems) * sizeof(T));
}

// GPU q's part: x at its columns, the units, the reduction into its partial (G > 1) or into y
// (G == 1, with alpha and beta).
template <class T>
void enqueue_part(mgpu::Exec& ex, int q, Uplo uplo, int n, int offset, T alpha, const BlockCyclicMatrix<T>& A,
                  Strided<const T> xs, T beta, Strided<T> ys, void* workspace) {
  const bool lower = uplo == Uplo::kLower;
  const long long l2 = blas2::device_l2_bytes();
  const Plan plan =
      symv_mgpu_plan::make_plan(A.layout, q, lower, sub_rows<T>(A.layout, q, lower, n, offset, l2), n, offset);
  const Buffers<T> buf = carve<T>(workspace, plan);
  const cudaStream_t s = ex.stream(q);
  const bool launched_units = plan.col_tiles > 0;
  if (launched_units) {
    mgpu::gather_x_kernel<T><<<mgpu::elementwise_grid(plan.nl), 256, 0, s>>>(plan.nl, plan.lc0, offset, A.layout, q,
                                                                              xs, buf.xcol);
    const T* a = A.local[q];
    const bool vector = A.ldl % Vec16<T>::kCount == 0 && blas2::aligned16(a);
    // Evict-first loads when the local triangle cannot stay in the L2 anyway (unknown L2: plain).
    const double stored = static_cast<double>(symv_mgpu_local_stored(A.layout, q, uplo, n, offset)) * sizeof(T);
    const bool stream_a = l2 > 0 && stored > static_cast<double>(l2);
    lower ? launch_main_sub<T, true>(plan, vector, stream_a, a, A.ldl, xs, buf.xcol, buf.slots, buf.row_parts, s)
          : launch_main_sub<T, false>(plan, vector, stream_a, a, A.ldl, xs, buf.xcol, buf.slots, buf.row_parts, s);
  }
  const bool alone = ex.gpus() == 1;
  const Strided<T> out = alone ? ys : Strided<T>{buf.partial, 1};
  const dim3 grid((n + kReduceElems - 1) / kReduceElems);
  const T a = alone ? alpha : T(1), b = alone ? beta : T(0);
  const T *slots = buf.slots, *row_parts = buf.row_parts;
  // A programmatic dependent of the units' kernel only: without it the kernel before this one in
  // the stream may be anything (the previous call's reduction reading this partial).
  if (launched_units)
    ex.check(blas2::launch_dependent(symv_mgpu_reduce_kernel<T>, grid, dim3(kThreads), s, plan, slots, row_parts, a,
                                     b, out));
  else
    symv_mgpu_reduce_kernel<T><<<grid, kThreads, 0, s>>>(plan, slots, row_parts, a, b, out);
}

}  // namespace

template <class T>
std::size_t symv_mgpu_workspace_bytes(const BlockCyclicLayout& layout) {
  if (layout.cols <= 0 || layout.block < 1 || layout.gpus < 1) return 0;
  const std::size_t sub4 = workspace_for<T>(layout, 4);
  return sizeof(T) == 4 ? sub4 : std::max(sub4, workspace_for<T>(layout, 2));
}

template <class T>
Status symv_mgpu_check_args(Uplo uplo, int n, int offset, const BlockCyclicMatrix<T>& A, const T* const* x, int incx,
                            T* const* y, int incy, void* const* workspace, std::size_t workspace_bytes) {
  if (uplo != Uplo::kLower && uplo != Uplo::kUpper) return Status::kInvalidValue;
  const Status layout_status = mgpu::check_layout(A, incx, incy);
  if (layout_status != Status::kSuccess) return layout_status;
  if (A.layout.rows != A.layout.cols) return Status::kInvalidValue;
  if (n < 0 || offset < 0 || static_cast<long long>(offset) + n > A.layout.cols) return Status::kInvalidValue;
  if (n == 0) return Status::kSuccess;  // quick return: nothing is read or written
  const Status pointers = mgpu::check_pointers(A, x, y, workspace, true);
  if (pointers != Status::kSuccess) return pointers;
  if (workspace_bytes < symv_mgpu_workspace_bytes<T>(A.layout)) return Status::kWorkspaceTooSmall;
  return Status::kSuccess;
}

template <class T>
Status symv_mgpu(Uplo uplo, int n, int offset, T alpha, const BlockCyclicMatrix<T>& A, const T* const* x, int incx,
                 T beta, T* const* y, int incy, void* const* workspace, std::size_t workspace_bytes,
                 const MgpuContext& ctx, cudaStream_t stream) {
  const Status st = symv_mgpu_check_args<T>(uplo, n, offset, A, x, incx, y, incy, workspace, workspace_bytes);
  if (st != Status::kSuccess || n == 0) return st;
  if (ctx.gpus() != A.layout.gpus) return Status::kInvalidValue;
  if (alpha == T(0) && beta == T(1)) return Status::kSuccess;
  const MgpuContext::Impl& c = ctx.impl();
  mgpu::Exec ex(c, stream);
  const int G = ex.gpus();
  if (ex.fork()) {
    if (alpha == T(0)) {  // A and x are not read
      for (int q = 0; q < G && ex.enter(q); ++q) {
        blas2::launch_scale(n, beta, blas2::make_strided(y[q], n, incy), ex.stream(q));
        ex.launched();
      }
    } else {
      for (int q = 0; q < G && ex.enter(q); ++q) {
        enqueue_part<T>(ex, q, uplo, n, offset, alpha, A, blas2::make_strided(x[q], n, incx), beta,
                        blas2::make_strided(y[q], n, incy), workspace[q]);
        ex.launched();
      }
      if (G > 1) {
        mgpu::PeerVectors<T> parts{};
        if (c.reduction == MgpuReduction::kP2P) {  // every GPU sums all partials, by peer reads
          parts.count = G;
          for (int r = 0; r < G; ++r) parts.p[r] = static_cast<const T*>(workspace[r]);
          ex.barrier();
        } else {  // NCCL: each partial becomes the sum in place
          parts.count = 1;
          ex.check(mgpu::nccl_all_reduce_sum(c, ex, workspace, static_cast<std::size_t>(n), sizeof(T)));
        }
        for (int q = 0; q < G && ex.enter(q); ++q) {
          if (c.reduction == MgpuReduction::kNccl) parts.p[0] = static_cast<const T*>(workspace[q]);
          mgpu::sum_partials_kernel<T><<<mgpu::elementwise_grid(n), 256, 0, ex.stream(q)>>>(
              n, parts, alpha, beta, blas2::make_strided(y[q], n, incy));
          ex.launched();
        }
      }
    }
  }
  return ex.join();
}

#define GPUPROBE_SYMV_MGPU_INSTANTIATE(T)                                                                           \
  template std::size_t symv_mgpu_workspace_bytes<T>(const BlockCyclicLayout&);                                      \
  template Status symv_mgpu_check_args<T>(Uplo, int, int, const BlockCyclicMatrix<T>&, const T* const*, int,        \
                                          T* const*, int, void* const*, std::size_t);                               \
  template Status symv_mgpu<T>(Uplo, int, int, T, const BlockCyclicMatrix<T>&, const T* const*, int, T, T* const*, \
                               int, void* const*, std::size_t, const MgpuContext&, cudaStream_t);
GPUPROBE_SYMV_MGPU_INSTANTIATE(float)
GPUPROBE_SYMV_MGPU_INSTANTIATE(double)
#undef GPUPROBE_SYMV_MGPU_INSTANTIATE

}  // namespace gpuprobe::kernels
