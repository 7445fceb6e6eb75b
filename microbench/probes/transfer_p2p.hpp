// Peer-to-peer between GPUs: the copies, the per-device streams that run them while another device's
// stream times them, and the pointer chase across the link. Shared by the probes (transfer_p2p.cu)
// and the GPU tests (tests/gpu/transfer_p2p_test.cu), so that the tests check the code that is timed.
//
// CUDA rules this code follows: a kernel launches into a stream of the current device, so every
// launch sets the device first; an event is recorded on a stream of the device it was created on;
// a stream may wait on an event of another device (cudaStreamWaitEvent), which is how the work of
// several devices is forked from and joined into the one stream the harness times.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuprobe/device_buffer.hpp"
#include "probes/memory_chains.hpp"

namespace gpuprobe {

enum class P2pEngine { kCopyEngine, kSm };
// Which device issues a copy: kWrite the source (its copy engine or SMs push into the peer),
// kRead the destination (it pulls from the peer).
enum class P2pForm { kWrite, kRead };
enum class P2pDirection { kOneWay, kBoth };

const char* p2p_engine_name(P2pEngine engine);           // "ce", "sm"
const char* p2p_form_name(P2pForm form);                 // "write", "read"
const char* p2p_direction_name(P2pDirection direction);  // "uni", "bidir"

// A buffer of bytes on a given device.
using P2pBuffer = DeviceBuffer<unsigned char>;

// Lets kernels (and copies) issued by `device` access `peer`'s memory. Idempotent: the first call
// per (device, peer) enables it for the process, as CUDA requires; later ones return at once.
void p2p_enable_access(int device, int peer);

// The device that issues a copy from src_device to dst_device in `form`.
int p2p_issuer(P2pForm form, int src_device, int dst_device);

struct P2pCopy {
  int src_device = 0;
  const void* src = nullptr;  // memory of src_device
  int dst_device = 0;
  void* dst = nullptr;  // memory of dst_device
  std::size_t bytes = 0;
};

// Enqueues one copy on `stream`, a stream of p2p_issuer(form, ...): cudaMemcpyPeerAsync (ce) or
// transfer_sm_copy on the issuer's SMs (sm). Peer access must be enabled for the issuer towards the
// other device (p2p_enable_access). Leaves the current device as it found it.
void p2p_enqueue_copy(P2pEngine engine, P2pForm form, const P2pCopy& copy, cudaStream_t stream);

// One non-blocking stream per device ("lane") for work timed on a stream of another device (the
// timing device: the harness's timed stream belongs to the probed GPU). fork() makes every lane
// wait for what is queued so far on the timed stream; join() makes the timed stream wait for what
// is queued so far on every lane. Events recorded on the timed stream before fork() and after
// join() then bracket all lanes' work: from the first start to the last end.
class P2pLanes {
 public:
  P2pLanes(int timing_device, const std::vector<int>& devices);
  ~P2pLanes();
  P2pLanes(const P2pLanes&) = delete;
  P2pLanes& operator=(const P2pLanes&) = delete;

  cudaStream_t stream(int device) const;  // throws Error for a device without a lane
  void fork(cudaStream_t timed);
  void join(cudaStream_t timed);

 private:
  struct Lane {
    int device;
    cudaStream_t stream;
    cudaEvent_t done;
  };
  int timing_device_;
  cudaEvent_t fork_ = nullptr;
  std::vector<Lane> lanes_;
};

// One sample of a transfer: fork, each copy on its issuer's lane (copies of different issuers in
// flight at once; copies of one issuer one after the other), join. `lanes` must have a lane for
// every issuer.
void p2p_enqueue_transfer(P2pLanes& lanes, P2pEngine engine, P2pForm form, const std::vector<P2pCopy>& copies,
                          cudaStream_t timed);

// A random cyclic chain of 8-byte pointers in one device's memory: element e at byte offset
// e * spacing; the element at lap position p (make_chain_order, random pattern) holds the absolute
// address of the element at position p + 1 (the last one that of position 0).
struct P2pChain {
  std::uint64_t* memory = nullptr;  // elements * spacing bytes on the owning device
  std::uint64_t elements = 0;
  std::uint64_t spacing = 128;  // bytes between elements: one pointer per 128-byte line
  std::uint64_t seed = 1;

  GP_HOST_DEVICE ChainOrder order() const { return make_chain_order(ChainPattern::kRandom, elements, seed); }
  GP_HOST_DEVICE std::uint64_t address_of(std::uint64_t element) const {
    return reinterpret_cast<std::uint64_t>(memory) + element * spacing;
  }
  GP_HOST_DEVICE std::uint64_t start() const { return address_of(chain_position_to_element(order(), 0)); }
  // The element a chase of `hops` hops from start() ends on.
  GP_HOST_DEVICE std::uint64_t element_after(std::uint64_t hops) const {
    return chain_position_to_element(order(), hops % elements);
  }
  // The element at `address`; `elements` (no element) for an address that is not one of the chain's.
  std::uint64_t element_at(std::uint64_t address) const;
};

// Writes the chain with a kernel on `memory_device` (the owner of chain.memory) and waits for it.
void p2p_build_chain(int memory_device, const P2pChain& chain);

// One thread on the current device follows `hops` pointers from `start` with ld.volatile.global
// (relaxed, system scope: the running GPU's L1 keeps nothing, so every hop is a request to the
// memory's owner, over the link when that is a peer). result (3 words, memory of the current
// device): [0] the address the chase ends on, [1] clock64 cycles and [2] globaltimer ns of the loop
// (the last load may still be in flight when the clocks are read: at most one hop of error).
void p2p_chase(std::uint64_t start, std::uint64_t hops, std::uint64_t* result, cudaStream_t stream);

}  // namespace gpuprobe
