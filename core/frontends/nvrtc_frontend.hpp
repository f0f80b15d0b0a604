#pragma once

#include "core/candidate_frontend.hpp"

namespace blaster {

// .cu candidates: the plan in the file's leading /* blaster */ comment, the includes the policy
// allows as companions, each variant compiled by NVRTC in the compile sandbox. A param the
// kernel name mentions is a template argument; any other a -D define.
class nvrtc_frontend final : public candidate_frontend {
 public:
  [[nodiscard]] candidate_kind kind() const override { return candidate_kind::cuda; }
  [[nodiscard]] frontend_plan read_plan(const std::filesystem::path& file, std::string_view source,
                                        const frontend_context& context) const override;
  [[nodiscard]] compile_request request(const variant_input& variant) const override;
  [[nodiscard]] std::string key(const compile_request& request) const override;
  [[nodiscard]] compile_output compile(const compile_request& request,
                                       const compile_limits& limits) const override;
};

}  // namespace blaster
