#include "benchmarking/stream_reference.hpp"

#include "core/cuda_driver.hpp"
#include "core/error.hpp"

namespace blaster {
namespace {

// Each range in 16-byte words where it is aligned to them, else in 4-byte words; a tail of a
// few bytes is left alone (the reference measures bandwidth, not values). What is read is
// folded into one word that is stored only where it equals `word`, so that no read can be left
// out by the compiler, and almost never written.
constexpr const char* reference_source = R"(
struct blaster_ranges {
  unsigned long long at[16];
  unsigned long long bytes[16];
  int count;
};

extern "C" __global__ void blaster_stream_reference(blaster_ranges reads, blaster_ranges writes,
                                                    unsigned word, unsigned* sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long first = static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
                                   threadIdx.x;
  unsigned folded = 0;
  for (int r = 0; r < reads.count; ++r) {
    if (reads.at[r] % 16 == 0) {
      const uint4* p = reinterpret_cast<const uint4*>(reads.at[r]);
      for (unsigned long long i = first; i < reads.bytes[r] / 16; i += stride) {
        const uint4 v = p[i];
        folded ^= v.x ^ v.y ^ v.z ^ v.w;
      }
    } else {
      const unsigned* p = reinterpret_cast<const unsigned*>(reads.at[r] & ~3ULL);
      for (unsigned long long i = first; i < reads.bytes[r] / 4; i += stride) folded ^= p[i];
    }
  }
  for (int r = 0; r < writes.count; ++r) {
    if (writes.at[r] % 16 == 0) {
      uint4* p = reinterpret_cast<uint4*>(writes.at[r]);
      uint4 v;
      v.x = v.y = v.z = v.w = word;
      for (unsigned long long i = first; i < writes.bytes[r] / 16; i += stride) p[i] = v;
    } else if (writes.at[r] % 4 == 0) {
      unsigned* p = reinterpret_cast<unsigned*>(writes.at[r]);
      for (unsigned long long i = first; i < writes.bytes[r] / 4; i += stride) p[i] = word;
    }
  }
  if (folded == word && sink != nullptr) *sink = folded;
}
)";

struct ranges_param {
  unsigned long long at[stream_reference::max_ranges];
  unsigned long long bytes[stream_reference::max_ranges];
  int count;
};

ranges_param param_of(const std::vector<stream_range>& ranges) {
  if (ranges.size() > stream_reference::max_ranges) {
    BLASTER_THROW("the stream reference takes at most {} ranges each way, not {}",
                  stream_reference::max_ranges, ranges.size());
  }
  ranges_param p{};
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    p.at[i] = ranges[i].at;
    p.bytes[i] = ranges[i].bytes;
  }
  p.count = static_cast<int>(ranges.size());
  return p;
}

// Enough blocks to keep every SM of the largest parts streaming.
constexpr unsigned reference_grid = 2048;
constexpr unsigned reference_threads = 256;

}  // namespace

stream_reference::stream_reference(const std::string& arch, compile_cache* cache)
    : kernel_(reference_source, std::string(kernel_name), arch, cache) {}

void stream_reference::operator()(const std::vector<stream_range>& reads,
                                  const std::vector<stream_range>& writes, std::uint32_t word,
                                  CUstream stream) const {
  ranges_param in = param_of(reads);
  ranges_param out = param_of(writes);
  // The sink is never written unless the folded reads equal the word; it then lands in the first
  // write range, which the reference overwrites anyway.
  CUdeviceptr sink = writes.empty() ? 0 : writes.front().at & ~3ULL;
  void* args[] = {&in, &out, &word, &sink};
  cuda::check(cuda::driver().cuLaunchKernel(kernel_.get(), reference_grid, 1, 1, reference_threads,
                                            1, 1, 0, stream, args, nullptr),
              "launching the stream reference");
}

}  // namespace blaster
