#include "benchmarking/timing/stream_hold.hpp"

#include "core/cuda_driver.hpp"

namespace blaster {
namespace {

constexpr const char* hold_source = R"(
extern "C" __global__ void blaster_stream_hold(unsigned long long ns) {
  unsigned long long start;
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}
)";

}  // namespace

stream_hold::stream_hold(const std::string& arch, compile_cache* cache)
    : kernel_(hold_source, std::string(kernel_name), arch, cache) {}

void stream_hold::operator()(double us, CUstream stream) const {
  auto ns = static_cast<unsigned long long>(us * 1000.0);
  void* args[] = {&ns};
  cuda::check(
      cuda::driver().cuLaunchKernel(kernel_.get(), 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr),
      "launching the stream hold");
}

}  // namespace blaster
