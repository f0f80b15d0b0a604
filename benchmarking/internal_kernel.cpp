#include "benchmarking/internal_kernel.hpp"

#include <fmt/format.h>

#include "benchmarking/kernel_timer.hpp"
#include "core/compile_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/cuda_stream.hpp"
#include "core/error.hpp"

namespace blaster {

internal_kernel::internal_kernel(const std::string& source, const std::string& name,
                                 const std::string& arch, compile_cache* cache) {
  compile_request request;
  request.source = source;
  request.file_name = name + ".cu";
  request.arch = arch;
  request.name_expressions = {name};
  const compile_output compiled = compile_cached(request, cache);
  if (!compiled.ok) BLASTER_THROW("the harness kernel {} did not compile:\n{}", name, compiled.log);
  module_.emplace(compiled.cubin);
  function_ = module_->function(compiled.lowered_names.at(name));
  name_ = name;
}

double internal_kernel::median_launch_us(unsigned grid, unsigned threads, void** args,
                                         const cuda::stream& stream) const {
  const auto samples = time_kernel(
      [&](CUstream s, int) {
        cuda::check(cuda::driver().cuLaunchKernel(function_, grid, 1, 1, threads, 1, 1, 0, s, args,
                                                  nullptr),
                    fmt::format("launching the harness kernel {}", name_));
      },
      stream, timing_options{.target_sample_ms = 2.0, .max_samples = 20}, {});
  return samples.median_us;
}

}  // namespace blaster
