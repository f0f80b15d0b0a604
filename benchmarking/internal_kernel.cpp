#include "benchmarking/internal_kernel.hpp"

#include "core/compile_cache.hpp"
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
}

}  // namespace blaster
