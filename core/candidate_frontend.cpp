#include "core/candidate_frontend.hpp"

#include "core/frontends/nvrtc_frontend.hpp"
#include "core/frontends/precompiled_frontend.hpp"
#include "core/frontends/triton_frontend.hpp"

namespace blaster {

const candidate_frontend& frontend_for(candidate_kind kind) {
  static const nvrtc_frontend nvrtc;
  static const triton_frontend triton;
  static const precompiled_frontend ptx(candidate_kind::ptx);
  static const precompiled_frontend cubin(candidate_kind::cubin);
  switch (kind) {
    case candidate_kind::cuda:
      return nvrtc;
    case candidate_kind::triton:
      return triton;
    case candidate_kind::ptx:
      return ptx;
    case candidate_kind::cubin:
      return cubin;
  }
  return nvrtc;
}

std::optional<candidate_kind> candidate_kind_of(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  if (extension == ".cu") return candidate_kind::cuda;
  if (extension == ".py") return candidate_kind::triton;
  if (extension == ".ptx") return candidate_kind::ptx;
  if (extension == ".cubin") return candidate_kind::cubin;
  return std::nullopt;
}

std::filesystem::path precompiled_plan_path(const std::filesystem::path& image) {
  std::filesystem::path plan = image;
  plan.replace_extension(".plan.json");
  return plan;
}

}  // namespace blaster
