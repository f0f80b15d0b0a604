#include "core/frontends/nvrtc_frontend.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/include_policy.hpp"

namespace blaster {

frontend_plan nvrtc_frontend::read_plan(const std::filesystem::path& file, std::string_view source,
                                        const frontend_context& context) const {
  frontend_plan out;
  out.plan = parse_launch_plan(source, file.string());
  try {
    out.companions = resolve_includes(
        source, file.string(),
        {.toolkit = cuda_include_dirs(), .common = common_headers_in(context.common_headers)});
  } catch (const input_error& e) {
    out.compile_error = e.what();
  }
  return out;
}

compile_request nvrtc_frontend::request(const variant_input& variant) const {
  compile_request request;
  request.source = std::string(variant.source);
  request.file_name = variant.file.filename().string();
  request.arch = variant.arch;
  request.headers = variant.plan.companions;
  const launch_plan& plan = variant.plan.plan;
  for (const auto& [name, values] : plan.params) {  // declaration order
    // A param the kernel name mentions is a template argument; any other is a -D define.
    const bool template_argument =
        std::any_of(plan.launch.begin(), plan.launch.end(), [&](const launch_step& step) {
          return instantiate_kernel_name(step.kernel, {{name, "\x01"}}) != step.kernel;
        });
    if (!template_argument) {
      request.defines.push_back(fmt::format("{}={}", name, variant.params.at(name)));
    }
  }
  request.name_expressions = variant.kernels;
  std::sort(request.name_expressions.begin(), request.name_expressions.end());
  request.name_expressions.erase(
      std::unique(request.name_expressions.begin(), request.name_expressions.end()),
      request.name_expressions.end());
  return request;
}

std::string nvrtc_frontend::key(const compile_request& request) const {
  return compile_key(request);
}

compile_output nvrtc_frontend::compile(const compile_request& request,
                                       const compile_limits& limits) const {
  return compile_sandboxed(request, limits);
}

}  // namespace blaster
