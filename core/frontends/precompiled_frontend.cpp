#include "core/frontends/precompiled_frontend.hpp"

#include <regex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

// Whether the image defines the kernel: an .entry of the PTX, or a symbol in the cubin's string
// table. The driver would say so too, but only on a GPU.
bool defines_kernel(candidate_kind kind, const std::string& image, const std::string& name) {
  if (kind == candidate_kind::ptx) {
    const std::regex entry(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*\()");
    for (auto it = std::sregex_iterator(image.begin(), image.end(), entry);
         it != std::sregex_iterator(); ++it) {
      if ((*it)[1].str() == name) return true;
    }
    return false;
  }
  return image.find(std::string(1, '\0') + name + std::string(1, '\0')) != std::string::npos;
}

}  // namespace

frontend_plan precompiled_frontend::read_plan(const std::filesystem::path& file,
                                              std::string_view /*source*/,
                                              const frontend_context& context) const {
  const std::filesystem::path plan_file = precompiled_plan_path(file);
  const std::optional<std::string> text = read_file_if_exists(plan_file);
  if (!text) {
    BLASTER_INPUT_ERROR(
        "{}:1:1: a precompiled image needs its launch plan beside it, in {} (the JSON of a "
        "/* blaster */ comment, without params)",
        file.string(), plan_file.filename().string());
  }
  if (text->size() > context.limits.max_source_bytes) {
    BLASTER_INPUT_ERROR("{}: the plan is {} bytes, over the limit of {} bytes; "
                        "--max-source-bytes raises the limit",
                        plan_file.string(), text->size(), context.limits.max_source_bytes);
  }
  frontend_plan out;
  out.plan = parse_launch_plan_json(*text, plan_file.string(), 0, text->size(),
                                    plan_dialect::precompiled);
  out.companions.push_back({plan_file.filename().string(), *text});
  return out;
}

compile_request precompiled_frontend::request(const variant_input& variant) const {
  compile_request request;
  request.kind = kind_;
  request.source = std::string(variant.source);
  request.file_name = variant.file.filename().string();
  request.arch = variant.arch;
  request.headers = variant.plan.companions;
  request.name_expressions = variant.kernels;
  return request;
}

std::string precompiled_frontend::key(const compile_request& request) const {
  sha256_hasher hasher;
  auto field = [&](std::string_view value) {
    hasher.update(fmt::format("{}:", value.size()));
    hasher.update(value);
  };
  field("blaster-precompiled-v1");
  field(to_string(request.kind));
  field(request.arch);
  field(request.file_name);
  for (const auto& name : request.name_expressions) field(name);
  field(request.source);
  for (const auto& header : request.headers) {
    field(header.name);
    field(header.content);
  }
  return hasher.finish_hex();
}

compile_output precompiled_frontend::compile(const compile_request& request,
                                             const compile_limits& /*limits*/) const {
  compile_output out;
  out.key = key(request);
  out.sources_sha256 = sources_sha256(request);
  for (const auto& h : request.headers) out.header_sha256[h.name] = sha256_hex(h.content);
  out.toolchain = fmt::format("precompiled {}", to_string(kind_));
  if (kind_ == candidate_kind::cubin && !request.source.starts_with("\x7f" "ELF")) {
    out.log = fmt::format("{}: not a cubin (an ELF file)\n", request.file_name);
    return out;
  }
  for (const auto& name : request.name_expressions) {
    if (!defines_kernel(kind_, request.source, name)) {
      out.log += fmt::format("{}: the image defines no kernel {}\n", request.file_name, name);
    }
    out.lowered_names[name] = name;
  }
  if (!out.log.empty()) {
    out.lowered_names.clear();
    return out;
  }
  out.ok = true;
  (kind_ == candidate_kind::ptx ? out.ptx : out.cubin) = request.source;
  out.log = fmt::format("{}: taken as it is\n", request.file_name);
  return out;
}

}  // namespace blaster
