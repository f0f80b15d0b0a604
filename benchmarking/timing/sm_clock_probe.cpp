#include "benchmarking/timing/sm_clock_probe.hpp"

#include <array>

#include "core/cuda_driver.hpp"
#include "core/cuda_stream.hpp"
#include "core/error.hpp"

namespace blaster {
namespace {

constexpr const char* clock_source = R"(
extern "C" __global__ void blaster_sm_clock(unsigned long long* out, long long spin_cycles) {
  unsigned long long t0;
  unsigned long long t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  long long c1 = c0;
  while (c1 - c0 < spin_cycles) c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  out[0] = t1 - t0;
  out[1] = static_cast<unsigned long long>(c1 - c0);
}
)";

// About 100 us at 2 GHz: long against the timer's granularity, short against a sample.
constexpr long long spin_cycles = 200'000;

}  // namespace

sm_clock_probe::sm_clock_probe(const std::string& arch, compile_cache* cache)
    : kernel_(clock_source, std::string(kernel_name), arch, cache),
      result_(2 * sizeof(unsigned long long)) {}

double sm_clock_probe::measure_mhz(const cuda::stream& stream) const {
  CUdeviceptr out = result_.get();
  long long cycles = spin_cycles;
  void* args[] = {&out, &cycles};
  cuda::check(cuda::driver().cuLaunchKernel(kernel_.get(), 1, 1, 1, 1, 1, 1, 0, stream.get(), args,
                                            nullptr),
              "launching the clock probe");
  stream.synchronize();
  std::array<unsigned long long, 2> values{};
  result_.download(std::as_writable_bytes(std::span(values)));
  return values[0] == 0 ? 0.0
                        : static_cast<double>(values[1]) / static_cast<double>(values[0]) * 1e3;
}

}  // namespace blaster
