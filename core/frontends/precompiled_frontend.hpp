#pragma once

#include "core/candidate_frontend.hpp"

namespace blaster {

// .ptx and .cubin candidates from any other compiler (CuTe DSL, TileLang, a model that writes
// PTX): the image is loaded as it is, and its plan is NAME.plan.json beside it, the JSON of a
// /* blaster */ comment without params (an image has one configuration); kernels are named by
// their entry symbols. Nothing runs at compile time, so no sandbox is needed; the plan file is a
// companion, so its bytes enter the digest and the CAS with the image's.
class precompiled_frontend final : public candidate_frontend {
 public:
  explicit precompiled_frontend(candidate_kind kind) : kind_(kind) {}
  [[nodiscard]] candidate_kind kind() const override { return kind_; }
  [[nodiscard]] frontend_plan read_plan(const std::filesystem::path& file, std::string_view source,
                                        const frontend_context& context) const override;
  [[nodiscard]] compile_request request(const variant_input& variant) const override;
  [[nodiscard]] std::string key(const compile_request& request) const override;
  [[nodiscard]] compile_output compile(const compile_request& request,
                                       const compile_limits& limits) const override;

 private:
  candidate_kind kind_;
};

}  // namespace blaster
