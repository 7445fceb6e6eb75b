// The multi-GPU context (symv_mgpu.hpp): per GPU a stream and events, peer access (kP2P), NCCL
// communicators (kNccl); and the NCCL reductions, the only code here that includes nccl.h.
#include <cstdlib>
#include <set>

#include "mgpu_internal.cuh"

#if defined(GPUPROBE_HAVE_NCCL)
#include <nccl.h>
#endif

namespace gpuprobe::kernels {

const char* mgpu_reduction_name(MgpuReduction reduction) {
  switch (reduction) {
    case MgpuReduction::kP2P: return "p2p";
    case MgpuReduction::kNccl: return "nccl";
  }
  return "unknown";
}

bool mgpu_nccl_available() {
#if defined(GPUPROBE_HAVE_NCCL)
  return true;
#else
  return false;
#endif
}

namespace {

// Releases what a (possibly half-built) context holds, each on its own device.
void destroy(MgpuContext::Impl& c) {
  int saved = -1;
  if (cudaGetDevice(&saved) != cudaSuccess) saved = -1;
#if defined(GPUPROBE_HAVE_NCCL)
  for (void* comm : c.comms)
    if (comm) ncclCommDestroy(static_cast<ncclComm_t>(comm));
#endif
  c.comms.clear();
  for (std::size_t q = 0; q < c.devices.size(); ++q) {
    if (cudaSetDevice(c.devices[q]) != cudaSuccess) continue;
    if (q < c.ready.size() && c.ready[q]) cudaEventDestroy(c.ready[q]);
    if (q < c.done.size() && c.done[q]) cudaEventDestroy(c.done[q]);
    if (q < c.streams.size() && c.streams[q]) cudaStreamDestroy(c.streams[q]);
    if (q == 0 && c.fork) cudaEventDestroy(c.fork);
  }
  c.ready.clear();
  c.done.clear();
  c.streams.clear();
  c.fork = nullptr;
  if (saved >= 0) cudaSetDevice(saved);
  cudaGetLastError();  // a failed clean-up call leaves no sticky error for the caller's next check
}

Status enable_peer_access(const std::vector<int>& devices) {
  const std::set<int> distinct(devices.begin(), devices.end());
  for (int a : distinct)
    for (int b : distinct) {
      if (a == b) continue;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess) return Status::kDeviceError;
      if (!can) return Status::kNotSupported;
      if (cudaSetDevice(a) != cudaSuccess) return Status::kDeviceError;
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();  // enabled earlier in this process: fine
      else if (e != cudaSuccess)
        return Status::kDeviceError;
    }
  return Status::kSuccess;
}

}  // namespace

MgpuContext::MgpuContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MgpuContext::~MgpuContext() {
  if (impl_) destroy(*impl_);
}

int MgpuContext::gpus() const { return static_cast<int>(impl_->devices.size()); }
int MgpuContext::device(int q) const { return impl_->devices[q]; }
MgpuReduction MgpuContext::reduction() const { return impl_->reduction; }

Status MgpuContext::create(const std::vector<int>& devices, MgpuReduction reduction,
                           std::unique_ptr<MgpuContext>* out) {
  if (!out) return Status::kNullPointer;
  out->reset();
  if (devices.empty() || devices.size() > static_cast<std::size_t>(kMgpuMaxGpus)) return Status::kInvalidValue;
  if (reduction != MgpuReduction::kP2P && reduction != MgpuReduction::kNccl) return Status::kInvalidValue;
  for (int d : devices)
    if (d < 0) return Status::kInvalidValue;
  const bool repeated = std::set<int>(devices.begin(), devices.end()).size() != devices.size();
  if (reduction == MgpuReduction::kNccl && (!mgpu_nccl_available() || repeated)) return Status::kNotSupported;

  int saved = -1;
  if (cudaGetDevice(&saved) != cudaSuccess) {
    cudaGetLastError();
    return Status::kDeviceError;
  }
  auto impl = std::make_unique<Impl>();
  impl->devices = devices;
  impl->reduction = reduction;
  const int G = static_cast<int>(devices.size());
  impl->streams.assign(G, nullptr);
  impl->ready.assign(G, nullptr);
  impl->done.assign(G, nullptr);
  Status st = Status::kSuccess;
  for (int q = 0; q < G && st == Status::kSuccess; ++q) {
    const bool ok = cudaSetDevice(devices[q]) == cudaSuccess &&
                    (q == 0 || cudaStreamCreateWithFlags(&impl->streams[q], cudaStreamNonBlocking) == cudaSuccess) &&
                    cudaEventCreateWithFlags(&impl->ready[q], cudaEventDisableTiming) == cudaSuccess &&
                    cudaEventCreateWithFlags(&impl->done[q], cudaEventDisableTiming) == cudaSuccess &&
                    (q != 0 || cudaEventCreateWithFlags(&impl->fork, cudaEventDisableTiming) == cudaSuccess);
    if (!ok) st = Status::kDeviceError;
  }
  if (st == Status::kSuccess && reduction == MgpuReduction::kP2P) st = enable_peer_access(devices);
#if defined(GPUPROBE_HAVE_NCCL)
  if (st == Status::kSuccess && reduction == MgpuReduction::kNccl) {
    // NVLink multicast (NVLS) stays off on the machines this runs on; NCCL reads the variable when
    // it initialises, so it is forced here, before the first communicator.
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    std::vector<ncclComm_t> comms(G, nullptr);
    if (ncclCommInitAll(comms.data(), G, devices.data()) != ncclSuccess) {
      st = Status::kDeviceError;
    } else {
      impl->comms.assign(comms.begin(), comms.end());
    }
  }
#endif
  cudaSetDevice(saved);
  if (st != Status::kSuccess) {
    destroy(*impl);
    cudaGetLastError();
    return st;
  }
  out->reset(new MgpuContext(std::move(impl)));
  return Status::kSuccess;
}

namespace mgpu {

#if defined(GPUPROBE_HAVE_NCCL)
namespace {
bool nccl_type(std::size_t element_bytes, ncclDataType_t* type) {
  if (element_bytes == 4) *type = ncclFloat;
  else if (element_bytes == 8) *type = ncclDouble;
  else return false;
  return true;
}
}  // namespace
#endif

Status nccl_all_reduce_sum(const MgpuContext::Impl& ctx, Exec& ex, void* const* buffers, std::size_t count,
                           std::size_t element_bytes) {
#if defined(GPUPROBE_HAVE_NCCL)
  ncclDataType_t type;
  if (ctx.comms.size() != ctx.devices.size() || !nccl_type(element_bytes, &type)) return Status::kNotSupported;
  if (ncclGroupStart() != ncclSuccess) return Status::kLaunchFailed;
  bool ok = true;
  for (int q = 0; q < ex.gpus() && ok; ++q)
    ok = ncclAllReduce(buffers[q], buffers[q], count, type, ncclSum, static_cast<ncclComm_t>(ctx.comms[q]),
                       ex.stream(q)) == ncclSuccess;
  // The group is ended in any case: a started group left open would swallow later NCCL calls.
  const bool ended = ncclGroupEnd() == ncclSuccess;
  return ok && ended ? Status::kSuccess : Status::kLaunchFailed;
#else
  (void)ctx, (void)ex, (void)buffers, (void)count, (void)element_bytes;
  return Status::kNotSupported;
#endif
}

Status nccl_all_gather(const MgpuContext::Impl& ctx, Exec& ex, const void* const* send, void* const* recv,
                       std::size_t count, std::size_t element_bytes) {
#if defined(GPUPROBE_HAVE_NCCL)
  ncclDataType_t type;
  if (ctx.comms.size() != ctx.devices.size() || !nccl_type(element_bytes, &type)) return Status::kNotSupported;
  if (ncclGroupStart() != ncclSuccess) return Status::kLaunchFailed;
  bool ok = true;
  for (int q = 0; q < ex.gpus() && ok; ++q)
    ok = ncclAllGather(send[q], recv[q], count, type, static_cast<ncclComm_t>(ctx.comms[q]), ex.stream(q)) ==
         ncclSuccess;
  const bool ended = ncclGroupEnd() == ncclSuccess;
  return ok && ended ? Status::kSuccess : Status::kLaunchFailed;
#else
  (void)ctx, (void)ex, (void)send, (void)recv, (void)count, (void)element_bytes;
  return Status::kNotSupported;
#endif
}

}  // namespace mgpu
}  // namespace gpuprobe::kernels
