#include "profiling/resource_report.hpp"

#include "core/cuda_driver.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

namespace blaster {
namespace {

int to_int(const std::ssub_match& m) { return std::stoi(m.str()); }

std::size_t type_bytes(std::string_view type) {
  // .u64 .s32 .f16 .b8 ...: the digits are the width in bits.
  return static_cast<std::size_t>(std::stoi(std::string(type.substr(2)))) / 8;
}

}  // namespace

std::vector<kernel_resources> parse_ptxas_log(std::string_view log) {
  static const std::regex compiling(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers(?:, used (\d+) barriers)?(.*))");
  static const std::regex smem(R"((\d+) bytes smem)");

  std::vector<kernel_resources> kernels;
  // The kernel the following lines describe; null while ptxas describes a device function
  // (its "Function properties for" block names a non-entry function).
  kernel_resources* current = nullptr;
  std::istringstream lines{std::string(log)};
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, compiling)) {
      kernels.push_back(kernel_resources{.lowered_name = m[1].str()});
      current = &kernels.back();
    } else if (std::regex_search(line, m, properties)) {
      auto it = std::find_if(kernels.begin(), kernels.end(), [&](const kernel_resources& k) {
        return k.lowered_name == m[1].str();
      });
      current = it == kernels.end() ? nullptr : &*it;
    } else if (current == nullptr) {
      continue;
    } else if (std::regex_search(line, m, frame)) {
      current->stack_bytes = to_int(m[1]);
      current->spill_store_bytes = to_int(m[2]);
      current->spill_load_bytes = to_int(m[3]);
    } else if (std::regex_search(line, m, used)) {
      current->registers = to_int(m[1]);
      if (m[2].matched) current->barriers = to_int(m[2]);
      const std::string rest = m[3].str();
      if (std::smatch s; std::regex_search(rest, s, smem)) current->shared_bytes = to_int(s[1]);
    }
  }
  return kernels;
}

kernel_resources query_kernel_resources(CUfunction function, const std::string& lowered_name) {
  auto attribute = [&](CUfunction_attribute which, const char* label) {
    int value = 0;
    cuda::check(cuda::driver().cuFuncGetAttribute(&value, which, function),
                fmt::format("cuFuncGetAttribute({}, {})", lowered_name, label));
    return value;
  };
  kernel_resources k;
  k.lowered_name = lowered_name;
  k.registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, "registers");
  k.stack_bytes = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local bytes");
  k.shared_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "shared bytes");
  return k;
}

std::map<std::string, std::vector<ptx_parameter>> parse_ptx_parameters(std::string_view ptx) {
  static const std::regex entry(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*\()");
  static const std::regex param(
      R"(\.param\s+(?:\.align\s+\d+\s+)?(\.[busf]\d+)\s+(?:\.ptr\s+)?(?:\.\w+\s+)*?[\w$]+(?:\[(\d+)\])?)");
  std::map<std::string, std::vector<ptx_parameter>> entries;
  const std::string text(ptx);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry);
       it != std::sregex_iterator(); ++it) {
    const auto open = static_cast<std::size_t>(it->position() + it->length());
    const auto close = text.find(')', open);
    if (close == std::string::npos) continue;
    const std::string list = text.substr(open, close - open);
    auto& params = entries[(*it)[1].str()];
    for (auto p = std::sregex_iterator(list.begin(), list.end(), param);
         p != std::sregex_iterator(); ++p) {
      const std::string type = (*p)[1].str();
      std::size_t bytes = type_bytes(type);
      if ((*p)[2].matched) bytes *= static_cast<std::size_t>(std::stoul((*p)[2].str()));
      params.push_back(ptx_parameter{.bytes = bytes, .kind = type[1]});
    }
  }
  return entries;
}


nlohmann::json to_json(const kernel_resources& k) {
  return {{"kernel", k.lowered_name},
          {"registers", k.registers},
          {"stack_bytes", k.stack_bytes},
          {"spill_store_bytes", k.spill_store_bytes},
          {"spill_load_bytes", k.spill_load_bytes},
          {"shared_bytes", k.shared_bytes},
          {"barriers", k.barriers}};
}

kernel_resources kernel_resources_from_json(const nlohmann::json& j) {
  return {.lowered_name = j.at("kernel").get<std::string>(),
          .registers = j.at("registers").get<int>(),
          .barriers = j.at("barriers").get<int>(),
          .stack_bytes = j.at("stack_bytes").get<int>(),
          .spill_store_bytes = j.at("spill_store_bytes").get<int>(),
          .spill_load_bytes = j.at("spill_load_bytes").get<int>(),
          .shared_bytes = j.at("shared_bytes").get<int>()};
}

}  // namespace blaster
