#include "cli/store_access.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster::cli {
namespace {

nlohmann::json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

}  // namespace

std::unique_ptr<store> open_existing_store(const global_options& global) {
  const std::filesystem::path home = resolve_home(global.home);
  check_home_layout(home);
  std::error_code ec;
  if (!std::filesystem::exists(home / "blaster.db", ec)) return nullptr;
  return std::make_unique<store>(home);
}

std::unique_ptr<store> require_store(const global_options& global) {
  std::unique_ptr<store> records = open_existing_store(global);
  if (!records) {
    BLASTER_INPUT_ERROR(
        "no blaster store at {} (no blaster.db there); pass --home DIR or set BLASTER_HOME to "
        "the folder blaster bench recorded into",
        resolve_home(global.home).string());
  }
  return records;
}

nlohmann::json to_json(const stored_result& x) {
  nlohmann::json detail = nullptr;
  if (!x.detail_json.empty()) {
    detail = nlohmann::json::parse(x.detail_json, nullptr, /*allow_exceptions=*/false);
    if (detail.is_discarded()) detail = x.detail_json;  // kept as text, never dropped
  }
  return {{"id", x.id},
          {"run_id", x.run_id},
          {"candidate", x.candidate},
          {"variant", x.variant},
          {"baseline", x.baseline},
          {"case", text_or_null(x.case_name)},
          {"status", x.status},
          {"reason", text_or_null(x.reason)},
          {"message", text_or_null(x.message)},
          {"metrics", x.metrics},
          {"source_sha256", text_or_null(x.source_sha256)},
          {"cubin_sha256", text_or_null(x.cubin_sha256)},
          {"samples_sha256", text_or_null(x.samples_sha256)},
          {"detail", detail}};
}

std::string format_optional(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("-");
}

}  // namespace blaster::cli
