#include "benchmarking/timing/internal_kernel.hpp"

#include <fmt/format.h>

#include "benchmarking/timing/kernel_timer.hpp"
#include "core/compile_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/cuda_stream.hpp"
#include "core/error.hpp"

namespace blaster {

internal_kernel::internal_kernel(const std::string& source, const std::string& name,
                                 const std::string& arch, compile_cache* cache)
    : internal_kernel(source, std::vector<std::string>{name}, arch, cache) {}

internal_kernel::internal_kernel(const std::string& source, const std::vector<std::string>& names,
                                 const std::string& arch, compile_cache* cache)
    : names_(names) {
  compile_request request;
  request.source = source;
  request.file_name = names.front().substr(0, names.front().find('<')) + ".cu";
  request.arch = arch;
  request.name_expressions = names;
  const compile_output compiled = compile_cached(request, cache);
  if (!compiled.ok) {
    BLASTER_THROW("the harness kernel {} did not compile:\n{}", names.front(), compiled.log);
  }
  module_.emplace(compiled.cubin);
  for (const auto& name : names)
    functions_[name] = module_->function(compiled.lowered_names.at(name));
}

timing_samples internal_kernel::launch_samples(const std::string& name, unsigned grid,
                                               unsigned threads, void** args,
                                               const cuda::stream& stream) const {
  const CUfunction function = get(name);
  return time_kernel(
      [&](CUstream s, int) {
        cuda::check(
            cuda::driver().cuLaunchKernel(function, grid, 1, 1, threads, 1, 1, 0, s, args, nullptr),
            fmt::format("launching the harness kernel {}", name));
      },
      stream, timing_options{.target_sample_ms = 2.0, .max_samples = 20}, {});
}

double internal_kernel::median_launch_us(unsigned grid, unsigned threads, void** args,
                                         const cuda::stream& stream) const {
  return launch_samples(names_.front(), grid, threads, args, stream).median_us;
}

}  // namespace blaster
