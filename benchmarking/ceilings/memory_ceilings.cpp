#include "benchmarking/ceilings/memory_ceilings.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "benchmarking/timing/internal_kernel.hpp"
#include "benchmarking/timing/kernel_timer.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_stream.hpp"
#include "core/device_buffer.hpp"

namespace blaster {
namespace {

// Grid-stride kernels keep four independent accesses in flight per thread; one-pass kernels
// give each thread P vectors a block apart and cover the buffer with one grid (on an H200 a copy
// moves most with P = 1, a read with P = 4). Reads fold what they load into a value the compiler
// cannot prove unused.
constexpr const char* ceilings_source = R"(
__device__ __forceinline__ unsigned fold(uint2 v) { return v.x ^ v.y; }
__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

__device__ __forceinline__ unsigned long long first_index() {
  return static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ unsigned long long grid_stride() {
  return static_cast<unsigned long long>(gridDim.x) * blockDim.x;
}
template <int P>
__device__ __forceinline__ unsigned long long pass_base() {
  return static_cast<unsigned long long>(blockIdx.x) * blockDim.x * P + threadIdx.x;
}

template <class T>
__global__ void blaster_copy_stride(const T* __restrict__ in, T* __restrict__ out,
                                    unsigned long long n) {
  const unsigned long long s = grid_stride();
  unsigned long long i = first_index();
  for (; i + 3 * s < n; i += 4 * s) {
    const T a = in[i], b = in[i + s], c = in[i + 2 * s], d = in[i + 3 * s];
    out[i] = a, out[i + s] = b, out[i + 2 * s] = c, out[i + 3 * s] = d;
  }
  for (; i < n; i += s) out[i] = in[i];
}

template <class T, int P>
__global__ void blaster_copy_once(const T* __restrict__ in, T* __restrict__ out,
                                  unsigned long long n) {
  const unsigned long long base = pass_base<P>();
  T v[P];
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (base + k * blockDim.x < n) v[k] = in[base + k * blockDim.x];
  }
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (base + k * blockDim.x < n) out[base + k * blockDim.x] = v[k];
  }
}

template <class T>
__global__ void blaster_read_stride(const T* __restrict__ in, unsigned long long n,
                                    unsigned* sink) {
  const unsigned long long s = grid_stride();
  unsigned long long i = first_index();
  unsigned folded = 0;
  for (; i + 3 * s < n; i += 4 * s) {
    folded ^= fold(in[i]) ^ fold(in[i + s]) ^ fold(in[i + 2 * s]) ^ fold(in[i + 3 * s]);
  }
  for (; i < n; i += s) folded ^= fold(in[i]);
  if (folded == 0x9E3779B9u) *sink = folded;  // the fill makes every fold 0
}

template <class T, int P>
__global__ void blaster_read_once(const T* __restrict__ in, unsigned long long n, unsigned* sink) {
  const unsigned long long base = pass_base<P>();
  unsigned folded = 0;
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (base + k * blockDim.x < n) folded ^= fold(in[base + k * blockDim.x]);
  }
  if (folded == 0x9E3779B9u) *sink = folded;
}

// In the L2: `passes` grid-stride passes in one launch, so that the launch's ramp and tail
// (a few microseconds against a few megabytes) do not hide the steady rate. Pass p starts
// n / passes * p vectors further on, and loads skip the L1 (ld.global.cg): no SM finds what its
// last pass read in its own L1.
__device__ __forceinline__ unsigned long long shifted(unsigned long long i,
                                                      unsigned long long shift,
                                                      unsigned long long n) {
  const unsigned long long j = i + shift;
  return j >= n ? j - n : j;
}

__global__ void blaster_l2_copy(const uint4* __restrict__ in, uint4* __restrict__ out,
                                unsigned long long n, unsigned passes) {
  const unsigned long long s = grid_stride();
  for (unsigned p = 0; p < passes; ++p) {
    const unsigned long long shift = n / passes * p;
    unsigned long long i = first_index();
    for (; i + 3 * s < n; i += 4 * s) {
      const unsigned long long a = shifted(i, shift, n), b = shifted(i + s, shift, n),
                               c = shifted(i + 2 * s, shift, n), d = shifted(i + 3 * s, shift, n);
      const uint4 va = __ldcg(in + a), vb = __ldcg(in + b), vc = __ldcg(in + c),
                  vd = __ldcg(in + d);
      out[a] = va, out[b] = vb, out[c] = vc, out[d] = vd;
    }
    for (; i < n; i += s) {
      const unsigned long long a = shifted(i, shift, n);
      out[a] = __ldcg(in + a);
    }
  }
}

__global__ void blaster_l2_read(const uint4* __restrict__ in, unsigned long long n,
                                unsigned passes, unsigned* sink) {
  const unsigned long long s = grid_stride();
  unsigned folded = 0;
  for (unsigned p = 0; p < passes; ++p) {
    const unsigned long long shift = n / passes * p;
    unsigned long long i = first_index();
    for (; i + 3 * s < n; i += 4 * s) {
      folded ^= fold(__ldcg(in + shifted(i, shift, n))) ^
                fold(__ldcg(in + shifted(i + s, shift, n))) ^
                fold(__ldcg(in + shifted(i + 2 * s, shift, n))) ^
                fold(__ldcg(in + shifted(i + 3 * s, shift, n)));
    }
    for (; i < n; i += s) folded ^= fold(__ldcg(in + shifted(i, shift, n)));
  }
  if (folded == 0x9E3779B9u) *sink = folded;
}

template <class T>
__global__ void blaster_write_stride(T* __restrict__ out, unsigned long long n, T value) {
  const unsigned long long s = grid_stride();
  for (unsigned long long i = first_index(); i < n; i += s) out[i] = value;
}

template <class T, int P>
__global__ void blaster_write_once(T* __restrict__ out, unsigned long long n, T value) {
  const unsigned long long base = pass_base<P>();
#pragma unroll
  for (int k = 0; k < P; ++k) {
    if (base + k * blockDim.x < n) out[base + k * blockDim.x] = value;
  }
}
)";

// [bytes] each way: far beyond the L2, and large enough that the launch's ramp and tail cost
// little (an H200 copies about 0.7% faster at 2 GiB than at 1 GiB).
constexpr std::size_t dram_bytes = std::size_t{2} << 30;

enum class traffic { copy, read, write };

// One kernel of the source for one kind of traffic and vector width; per_thread is P of the
// one-pass kernels, 0 for grid-stride ones; passes is the L2 kernels' passes per launch, 0 for
// the others.
struct ceiling_kernel {
  std::string name;
  traffic kind;
  std::size_t vector_bytes;
  unsigned per_thread;
  unsigned passes = 0;
};

// [passes] per launch of the L2 kernels: tens of microseconds per launch on an H100.
constexpr unsigned l2_passes = 16;

const std::vector<ceiling_kernel>& l2_kernels() {
  static const std::vector<ceiling_kernel> kernels = {
      {"blaster_l2_copy", traffic::copy, 16, 0, l2_passes},
      {"blaster_l2_read", traffic::read, 16, 0, l2_passes},
  };
  return kernels;
}

const std::vector<ceiling_kernel>& ceiling_kernels() {
  static const std::vector<ceiling_kernel> kernels = {
      {"blaster_copy_stride<uint2>", traffic::copy, 8, 0},
      {"blaster_copy_stride<uint4>", traffic::copy, 16, 0},
      {"blaster_copy_once<uint2, 4>", traffic::copy, 8, 4},
      {"blaster_copy_once<uint4, 1>", traffic::copy, 16, 1},
      {"blaster_copy_once<uint4, 4>", traffic::copy, 16, 4},
      {"blaster_read_stride<uint4>", traffic::read, 16, 0},
      {"blaster_read_once<uint4, 1>", traffic::read, 16, 1},
      {"blaster_read_once<uint4, 4>", traffic::read, 16, 4},
      {"blaster_write_stride<uint4>", traffic::write, 16, 0},
      {"blaster_write_once<uint4, 1>", traffic::write, 16, 1},
      {"blaster_write_once<uint4, 4>", traffic::write, 16, 4},
  };
  return kernels;
}

struct ceiling_buffers {
  CUdeviceptr in = 0;
  CUdeviceptr out = 0;
  CUdeviceptr sink = 0;
};

// Times `k` over `bytes` per buffer in every launch shape and keeps the best in `best`.
void try_kernel(const internal_kernel& module, const ceiling_kernel& k, const ceiling_buffers& b,
                std::size_t bytes, int sms, const cuda::stream& stream, const std::string& where,
                bandwidth_ceiling& best) {
  unsigned long long n = bytes / k.vector_bytes;
  CUdeviceptr in = b.in;
  CUdeviceptr out = b.out;
  CUdeviceptr sink = b.sink;
  unsigned passes = k.passes;
  std::array<unsigned, 4> value = {0x3C003C00U, 0x3C003C00U, 0x3C003C00U, 0x3C003C00U};
  std::vector<void*> args;
  switch (k.kind) {
    case traffic::copy:
      args = {&in, &out, &n};
      break;
    case traffic::read:
      args = {&in, &n};
      break;
    case traffic::write:
      args = {&out, &n, value.data()};
      break;
  }
  if (passes > 0) args.push_back(&passes);
  if (k.kind == traffic::read) args.push_back(&sink);
  const auto moved = static_cast<std::int64_t>((k.kind == traffic::copy ? 2 : 1) * n *
                                               k.vector_bytes * std::max(passes, 1U));
  auto consider = [&](unsigned grid, unsigned threads, const std::string& shape) {
    const timing_samples samples =
        module.launch_samples(k.name, grid, threads, args.data(), stream);
    const double rate = static_cast<double>(moved) / (samples.median_us * 1e-6);
    if (rate <= best.bytes_per_second) return;
    const auto [low, high] =
        std::minmax_element(samples.sample_us.begin(), samples.sample_us.end());
    best.bytes_per_second = rate;
    best.bytes_moved = moved;
    best.time_us = samples.median_us;
    best.spread = *high / *low - 1.0;
    best.config = fmt::format("{} {}, {}", k.name, where, shape);
  };
  for (unsigned threads : {128U, 256U, 512U}) {
    if (k.per_thread > 0) {
      const unsigned long long per_block = threads * k.per_thread;
      const auto grid = static_cast<unsigned>((n + per_block - 1) / per_block);
      consider(grid, threads, fmt::format("one pass, grid {} x {}", grid, threads));
      continue;
    }
    if (threads == 128U) continue;  // grid-stride: a few large blocks per SM
    for (int blocks_per_sm : {2, 4, 8}) {
      const auto grid = static_cast<unsigned>(sms * blocks_per_sm);
      consider(grid, threads, fmt::format("grid-stride, grid {} x {}", grid, threads));
    }
  }
}

// Interpolates between the write-only (share 0), copy (share 1/2) and read-only (share 1)
// values of `value` by the share of bytes read.
double by_share(const memory_ceilings& m, std::int64_t read, std::int64_t written,
                const std::function<double(const bandwidth_ceiling&)>& value) {
  const double total = static_cast<double>(read) + static_cast<double>(written);
  if (total <= 0.0) return value(m.copy);
  const double share = static_cast<double>(read) / total;
  if (share <= 0.5) {
    return value(m.write) + (value(m.copy) - value(m.write)) * (share / 0.5);
  }
  return value(m.copy) + (value(m.read) - value(m.copy)) * ((share - 0.5) / 0.5);
}

}  // namespace

double memory_ceilings::dram_for(std::int64_t read_bytes, std::int64_t written_bytes) const {
  return by_share(*this, read_bytes, written_bytes,
                  [](const bandwidth_ceiling& c) { return c.bytes_per_second; });
}

double memory_ceilings::dram_bound() const {
  return std::max({peak_bytes_per_second, copy.bytes_per_second, read.bytes_per_second,
                   write.bytes_per_second});
}

double memory_ceilings::dram_spread_for(std::int64_t read_bytes, std::int64_t written_bytes) const {
  const double total = static_cast<double>(read_bytes) + static_cast<double>(written_bytes);
  const double share = total <= 0.0 ? 0.5 : static_cast<double>(read_bytes) / total;
  const bandwidth_ceiling& other = share < 0.5 ? write : read;
  return share == 0.5 ? copy.spread : std::max(copy.spread, other.spread);
}

double peak_memory_bandwidth(const cuda::device_properties& device) {
  // Double data rate: two transfers per clock over the whole bus.
  return 2.0 * device.memory_clock_khz * 1e3 * device.memory_bus_width_bits / 8.0;
}

memory_ceilings measure_memory_ceilings(const cuda::context& context, const cuda::stream& stream,
                                        compile_cache* cache) {
  std::vector<std::string> names;
  for (const auto& k : ceiling_kernels()) names.push_back(k.name);
  for (const auto& k : l2_kernels()) names.push_back(k.name);
  const internal_kernel module(ceilings_source, names, context.properties().arch(), cache);

  // A small device keeps three quarters of its memory free.
  const std::size_t bytes =
      std::min<std::size_t>(dram_bytes, context.properties().total_memory_bytes / 8 / 4096 * 4096);
  cuda::device_buffer in(bytes);
  cuda::device_buffer out(bytes);
  cuda::device_buffer sink(sizeof(unsigned));
  in.fill_u32(0x3C003C00U, stream.get());  // not zeros: some memory systems move zeros faster
  stream.synchronize();
  const ceiling_buffers buffers{.in = in.get(), .out = out.get(), .sink = sink.get()};
  const int sms = context.properties().sm_count;

  memory_ceilings m;
  m.peak_bytes_per_second = peak_memory_bandwidth(context.properties());
  for (const auto& k : ceiling_kernels()) {
    bandwidth_ceiling& best = k.kind == traffic::copy   ? m.copy
                              : k.kind == traffic::read ? m.read
                                                        : m.write;
    try_kernel(module, k, buffers, bytes, sms, stream, fmt::format("{} MiB", bytes >> 20U), best);
  }
  // In the L2: a copy of a quarter of it each way, a read of half of it, each launch finding
  // the data the last one left. (One pass per launch understated it: on an H100 such a copy
  // reached 4.74 TB/s, while fused_add_rms_norm at 1024 tokens moved its 33 MB in the L2 at
  // 5.24 TB/s under graph timing.)
  const auto l2 = static_cast<std::size_t>(context.properties().l2_bytes);
  for (const auto& k : l2_kernels()) {
    const std::size_t resident = (k.kind == traffic::copy ? l2 / 4 : l2 / 2) / 4096 * 4096;
    try_kernel(module, k, buffers, resident, sms, stream,
               fmt::format("{} MiB in the L2", resident >> 20U), m.l2);
  }
  return m;
}

}  // namespace blaster
