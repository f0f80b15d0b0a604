#include "core/frontend_kernel.hpp"

namespace blaster {

std::string_view to_string(candidate_kind kind) {
  switch (kind) {
    case candidate_kind::cuda:
      return "cuda";
    case candidate_kind::triton:
      return "triton";
    case candidate_kind::ptx:
      return "ptx";
    case candidate_kind::cubin:
      return "cubin";
  }
  return "?";
}

nlohmann::json to_json(const frontend_kernel& k) {
  nlohmann::json parameters = nlohmann::json::array();
  for (const auto& p : k.parameters) {
    parameters.push_back({{"bytes", p.bytes}, {"kind", std::string(1, p.kind)}});
  }
  nlohmann::json scratch = nlohmann::json::array();
  for (const auto& s : k.scratch) {
    scratch.push_back({{"name", s.name}, {"block_bytes", s.block_bytes}, {"align", s.align}});
  }
  nlohmann::json j = {{"parameters", parameters},
                      {"shared_bytes", k.shared_bytes},
                      {"scratch", scratch}};
  if (k.block) j["block"] = *k.block;
  return j;
}

frontend_kernel frontend_kernel_from_json(const nlohmann::json& j) {
  frontend_kernel k;
  for (const auto& p : j.at("parameters")) {
    const auto kind = p.at("kind").get<std::string>();
    k.parameters.push_back({p.at("bytes").get<std::size_t>(), kind.empty() ? 'b' : kind[0]});
  }
  if (j.contains("block")) k.block = j.at("block").get<std::array<unsigned, 3>>();
  k.shared_bytes = j.at("shared_bytes").get<unsigned>();
  for (const auto& s : j.at("scratch")) {
    k.scratch.push_back({s.at("name").get<std::string>(), s.at("block_bytes").get<std::uint64_t>(),
                         s.at("align").get<std::uint64_t>()});
  }
  return k;
}

}  // namespace blaster
