// Multi-GPU GEMV (symv_mgpu.hpp) in the block-column cyclic layout: GPU q's columns of the
// submatrix are one contiguous local range, so its part is the single-GPU gemv (gemv.hpp, kAuto) on
// an m x nl matrix with leading dimension ldl. kNoTrans: x gathered at q's columns, a partial y of m
// elements per GPU, summed across GPUs as SYMV's partials (P2P peer reads or NCCL allreduce).
// kTrans: q computes the nl elements of y at its own columns (a "piece"), and every GPU gathers the
// G pieces into its y (peer reads, or NCCL allgather of pieces padded to the largest).
#include <algorithm>

#include "gpuprobe/kernels/gemv.hpp"
#include "gpuprobe/kernels/symv_mgpu.hpp"
#include "mgpu_internal.cuh"

namespace gpuprobe::kernels {
namespace {

using blas2::Strided;

// GPU q's local columns of the global range [co, co + n): [lc0, lc0 + nl).
struct LocalRange {
  int lc0 = 0, nl = 0;
};
LocalRange local_range(const BlockCyclicLayout& L, int q, int col_offset, int n) {
  LocalRange r;
  r.lc0 = L.local_cols_before(q, col_offset);
  r.nl = L.local_cols_before(q, col_offset + n) - r.lc0;
  return r;
}

// Workspace of every GPU (the same offsets on each, so that a GPU finds a peer's part): the gemv
// workspace (its counters first), x at the GPU's columns (kNoTrans), the part (kNoTrans: the partial
// y, m elements; kTrans: the piece, nl_max elements), and for kTrans the gathered pieces (G nl_max,
// NCCL's allgather).
struct Carve {
  std::size_t gemv_bytes = 0;  // each GPU's gemv workspace, the largest of the GPUs' needs
  std::size_t xl = 0, part = 0, recv = 0, total = 0;  // byte offsets, and the size
  int nl_max = 0;
};
template <class T>
Carve carve(Trans trans, int m, int n, int col_offset, const BlockCyclicLayout& L) {
  Carve c;
  for (int q = 0; q < L.gpus; ++q) {
    const LocalRange r = local_range(L, q, col_offset, n);
    c.nl_max = std::max(c.nl_max, r.nl);
    if (L.gpus > 1 && r.nl > 0) c.gemv_bytes = std::max(c.gemv_bytes, gemv_workspace_bytes<T>(trans, m, r.nl));
  }
  if (L.gpus == 1) c.gemv_bytes = gemv_workspace_bytes<T>(trans, m, n);
  const bool no_trans = trans == Trans::kNoTrans;
  c.xl = mgpu::round_bytes(c.gemv_bytes);
  c.part = c.xl + (no_trans ? mgpu::round_bytes(static_cast<std::size_t>(c.nl_max) * sizeof(T)) : 0);
  c.recv = c.part + mgpu::round_bytes(static_cast<std::size_t>(no_trans ? m : c.nl_max) * sizeof(T));
  c.total = c.recv + (no_trans ? 0 : mgpu::round_bytes(static_cast<std::size_t>(L.gpus) * c.nl_max * sizeof(T)));
  return c;
}

template <class T>
T* at(void* workspace, std::size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(workspace) + offset);
}

}  // namespace

template <class T>
std::size_t gemv_mgpu_workspace_bytes(Trans trans, int m, int n, int col_offset, const BlockCyclicLayout& layout) {
  if (m <= 0 || n <= 0 || col_offset < 0 || layout.block < 1 || layout.gpus < 1 ||
      static_cast<long long>(col_offset) + n > layout.cols)
    return 0;
  return carve<T>(trans, m, n, col_offset, layout).total;
}

Status gemv_mgpu_workspace_init(void* const* workspace, std::size_t workspace_bytes, const MgpuContext& ctx,
                                cudaStream_t stream) {
  if (!workspace) return Status::kNullPointer;
  mgpu::Exec ex(ctx.impl(), stream);
  if (ex.fork())
    for (int q = 0; q < ex.gpus() && ex.enter(q); ++q)
      ex.check(gemv_workspace_init(workspace[q], workspace_bytes, ex.stream(q)));
  return ex.join();
}

template <class T>
Status gemv_mgpu_check_args(Trans trans, int m, int n, int row_offset, int col_offset, const BlockCyclicMatrix<T>& A,
                            const T* const* x, int incx, T* const* y, int incy, void* const* workspace,
                            std::size_t workspace_bytes) {
  if (trans != Trans::kNoTrans && trans != Trans::kTrans) return Status::kInvalidValue;
  const Status layout_status = mgpu::check_layout(A, incx, incy);
  if (layout_status != Status::kSuccess) return layout_status;
  const BlockCyclicLayout& L = A.layout;
  if (m < 0 || n < 0 || row_offset < 0 || col_offset < 0 || static_cast<long long>(row_offset) + m > L.rows ||
      static_cast<long long>(col_offset) + n > L.cols)
    return Status::kInvalidValue;
  if (m == 0 || n == 0) return Status::kSuccess;  // quick return: y untouched (reference BLAS)
  const Carve c = carve<T>(trans, m, n, col_offset, L);
  const Status pointers = mgpu::check_pointers(A, x, y, workspace, c.total > 0);
  if (pointers != Status::kSuccess) return pointers;
  if (workspace_bytes < c.total) return Status::kWorkspaceTooSmall;
  // Each GPU's part as the single-GPU gemv sees it (its grid limits, ...).
  const bool no_trans = trans == Trans::kNoTrans;
  for (int q = 0; q < L.gpus; ++q) {
    const LocalRange r = L.gpus == 1 ? LocalRange{col_offset, n} : local_range(L, q, col_offset, n);
    if (r.nl == 0) continue;
    const T* a = A.local[q] + static_cast<long long>(r.lc0) * A.ldl + row_offset;
    const T* xq = L.gpus > 1 && no_trans ? at<T>(workspace[q], c.xl) : x[q];
    T* yq = L.gpus > 1 ? at<T>(workspace[q], c.part) : y[q];
    const Status s = gemv_check_args<T>(trans, m, r.nl, a, A.ldl, xq, L.gpus > 1 && no_trans ? 1 : incx, yq,
                                        L.gpus > 1 ? 1 : incy, workspace[q], c.gemv_bytes);
    if (s != Status::kSuccess) return s;
  }
  return Status::kSuccess;
}

template <class T>
Status gemv_mgpu(Trans trans, int m, int n, int row_offset, int col_offset, T alpha, const BlockCyclicMatrix<T>& A,
                 const T* const* x, int incx, T beta, T* const* y, int incy, void* const* workspace,
                 std::size_t workspace_bytes, const MgpuContext& ctx, cudaStream_t stream) {
  const Status st =
      gemv_mgpu_check_args<T>(trans, m, n, row_offset, col_offset, A, x, incx, y, incy, workspace, workspace_bytes);
  if (st != Status::kSuccess || m == 0 || n == 0) return st;
  if (ctx.gpus() != A.layout.gpus) return Status::kInvalidValue;
  if (alpha == T(0) && beta == T(1)) return Status::kSuccess;
  const BlockCyclicLayout& L = A.layout;
  const bool no_trans = trans == Trans::kNoTrans;
  const int x_len = no_trans ? n : m, y_len = no_trans ? m : n;
  const Carve c = carve<T>(trans, m, n, col_offset, L);
  const MgpuContext::Impl& impl = ctx.impl();
  mgpu::Exec ex(impl, stream);
  const int G = ex.gpus();
  auto local = [&](int q, int lc0) { return A.local[q] + static_cast<long long>(lc0) * A.ldl + row_offset; };
  if (!ex.fork()) return ex.join();
  if (alpha == T(0)) {  // A and x are not read
    for (int q = 0; q < G && ex.enter(q); ++q) {
      blas2::launch_scale(y_len, beta, blas2::make_strided(y[q], y_len, incy), ex.stream(q));
      ex.launched();
    }
    return ex.join();
  }
  if (G == 1) {
    if (ex.enter(0))
      ex.check(gemv<T>(trans, m, n, alpha, local(0, col_offset), A.ldl, x[0], incx, beta, y[0], incy, workspace[0],
                       c.gemv_bytes, stream));
    return ex.join();
  }
  // Each GPU's part: the partial y (N) or its piece of y (T), unscaled.
  for (int q = 0; q < G && ex.enter(q); ++q) {
    const LocalRange r = local_range(L, q, col_offset, n);
    const cudaStream_t s = ex.stream(q);
    T* part = at<T>(workspace[q], c.part);
    if (no_trans) {
      if (r.nl == 0) {
        ex.check(cudaMemsetAsync(part, 0, static_cast<std::size_t>(m) * sizeof(T), s));
        continue;
      }
      T* xl = at<T>(workspace[q], c.xl);
      mgpu::gather_x_kernel<T><<<mgpu::elementwise_grid(r.nl), 256, 0, s>>>(
          r.nl, r.lc0, col_offset, L, q, blas2::make_strided(x[q], x_len, incx), xl);
      ex.launched();
      ex.check(gemv<T>(Trans::kNoTrans, m, r.nl, T(1), local(q, r.lc0), A.ldl, xl, 1, T(0), part, 1, workspace[q],
                       c.gemv_bytes, s));
    } else if (r.nl > 0) {
      ex.check(gemv<T>(Trans::kTrans, m, r.nl, T(1), local(q, r.lc0), A.ldl, x[q], incx, T(0), part, 1, workspace[q],
                       c.gemv_bytes, s));
    }
  }
  mgpu::PeerVectors<T> peers{};
  peers.count = G;
  const bool p2p = impl.reduction == MgpuReduction::kP2P;
  if (p2p) {
    for (int r = 0; r < G; ++r) {
      peers.p[r] = at<T>(workspace[r], c.part);
      peers.lc0[r] = local_range(L, r, col_offset, n).lc0;
    }
    ex.barrier();
  } else if (no_trans) {
    std::vector<void*> parts(G);
    for (int q = 0; q < G; ++q) parts[q] = at<T>(workspace[q], c.part);
    ex.check(mgpu::nccl_all_reduce_sum(impl, ex, parts.data(), static_cast<std::size_t>(m), sizeof(T)));
    peers.count = 1;
  } else {
    std::vector<const void*> send(G);
    std::vector<void*> recv(G);
    for (int q = 0; q < G; ++q) {
      send[q] = at<T>(workspace[q], c.part);
      recv[q] = at<T>(workspace[q], c.recv);
      peers.lc0[q] = local_range(L, q, col_offset, n).lc0;
    }
    ex.check(mgpu::nccl_all_gather(impl, ex, send.data(), recv.data(), static_cast<std::size_t>(c.nl_max), sizeof(T)));
  }
  for (int q = 0; q < G && ex.enter(q); ++q) {
    const cudaStream_t s = ex.stream(q);
    const Strided<T> yq = blas2::make_strided(y[q], y_len, incy);
    if (!p2p && no_trans) peers.p[0] = at<T>(workspace[q], c.part);  // the allreduced sum, on this GPU
    if (!p2p && !no_trans)
      for (int r = 0; r < G; ++r) peers.p[r] = at<T>(workspace[q], c.recv) + static_cast<std::size_t>(r) * c.nl_max;
    if (no_trans)
      mgpu::sum_partials_kernel<T><<<mgpu::elementwise_grid(m), 256, 0, s>>>(m, peers, alpha, beta, yq);
    else
      mgpu::gather_pieces_kernel<T><<<mgpu::elementwise_grid(n), 256, 0, s>>>(n, col_offset, L, peers, alpha, beta, yq);
    ex.launched();
  }
  return ex.join();
}

#define GPUPROBE_GEMV_MGPU_INSTANTIATE(T)                                                                          \
  template std::size_t gemv_mgpu_workspace_bytes<T>(Trans, int, int, int, const BlockCyclicLayout&);               \
  template Status gemv_mgpu_check_args<T>(Trans, int, int, int, int, const BlockCyclicMatrix<T>&, const T* const*, \
                                          int, T* const*, int, void* const*, std::size_t);                         \
  template Status gemv_mgpu<T>(Trans, int, int, int, int, T, const BlockCyclicMatrix<T>&, const T* const*, int, T, \
                               T* const*, int, void* const*, std::size_t, const MgpuContext&, cudaStream_t);
GPUPROBE_GEMV_MGPU_INSTANTIATE(float)
GPUPROBE_GEMV_MGPU_INSTANTIATE(double)
#undef GPUPROBE_GEMV_MGPU_INSTANTIATE

}  // namespace gpuprobe::kernels
