#include "optimize/attempt.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <regex>

namespace blaster {
namespace {

template <typename T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& value) {
  j[key] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> get_optional(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

}  // namespace

std::string_view trajectory_status(std::string_view reason) {
  if (reason.empty()) return "ok";
  // The source never became a kernel that ran.
  constexpr std::array unbuilt = {std::string_view("compile_error"), std::string_view("plan_error"),
                                  std::string_view("invalid_reply")};
  for (std::string_view r : unbuilt) {
    if (r == reason) return "compileerror";
  }
  return "wrongresult";
}

std::optional<int> first_error_line(std::string_view log, std::string_view file_name,
                                    std::string_view source) {
  // NVRTC: "name.cu(12): error: ...", also with a column: "name.cu(12, 4): error".
  static const std::regex located(
      R"re(^([^(]*)\((\d+)(?:,\s*\d+)?\):\s*(?:catastrophic\s+)?error[^"]*(?:"([^"]*)")?)re");
  std::optional<std::string> unnamed_kernel;
  for (std::size_t at = 0; at < log.size();) {
    const std::size_t end = std::min(log.find('\n', at), log.size());
    const std::string_view line = log.substr(at, end - at);
    at = end + 1;
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(line.begin(), line.end(), m, located)) continue;
    if (m[1].str() == file_name) {
      int number = 0;
      const auto text = m[2].str();
      if (std::from_chars(text.data(), text.data() + text.size(), number).ec == std::errc()) {
        return number;
      }
    } else if (m[1].str() == "__nv_name_map" && m[3].matched && !unnamed_kernel) {
      unnamed_kernel = m[3].str();
    }
  }
  if (!unnamed_kernel || unnamed_kernel->empty()) return std::nullopt;
  // The plan names the kernel in the leading comment: its line is the one to fix.
  int number = 1;
  for (std::size_t at = 0; at < source.size(); ++number) {
    const std::size_t end = std::min(source.find('\n', at), source.size());
    if (source.substr(at, end - at).find(*unnamed_kernel) != std::string_view::npos) {
      return number;
    }
    at = end + 1;
  }
  return std::nullopt;
}

nlohmann::json to_json(const attempt& a) {
  nlohmann::json j = {
      {"step", a.step},
      {"hypothesis", a.hypothesis},
      {"kind", a.kind},
      {"tags", a.tags},
      {"status", a.status},
      {"reason", a.reason},
      {"message", a.message},
      {"log", a.log},
      {"variant", a.variant},
      {"params", a.params},
      {"reward", a.reward},
      {"diagnosis", a.diagnosis},
      {"bound", a.bound},
      {"improved_bound", a.improved_bound},
      {"gpu", a.gpu},
      {"kept", a.kept},
      {"at_s", a.at_s},
      {"elapsed_s", a.elapsed_s},
      {"bench_run_id", a.bench_run_id},
      {"source_sha256", a.source_sha256},
      {"reply_sha256", a.reply_sha256},
  };
  if (!a.request_sha256.empty()) j["request_sha256"] = a.request_sha256;
  if (!a.answer_sha256.empty()) j["answer_sha256"] = a.answer_sha256;
  if (a.sessions > 0) j["sessions"] = a.sessions;
  if (a.reward_sessions > 0) j["reward_sessions"] = a.reward_sessions;
  if (!a.phase_ms.empty()) j["phase_ms"] = a.phase_ms;
  put_optional(j, "parent", a.parent);
  put_optional(j, "error_line", a.error_line);
  put_optional(j, "time_us", a.time_us);
  put_optional(j, "baseline_us", a.baseline_us);
  put_optional(j, "speedup", a.speedup);
  put_optional(j, "speedup_low", a.speedup_low);
  put_optional(j, "speedup_high", a.speedup_high);
  put_optional(j, "roofline_pct", a.roofline_pct);
  return j;
}

attempt attempt_from_json(const nlohmann::json& j) {
  attempt a;
  a.step = j.at("step").get<int>();
  a.parent = get_optional<int>(j, "parent");
  a.hypothesis = j.value("hypothesis", std::string());
  a.kind = j.value("kind", std::string());
  a.tags = j.value("tags", std::vector<std::string>());
  a.sessions = j.value("sessions", 0);
  a.reward_sessions = j.value("reward_sessions", 0);
  a.status = j.at("status").get<std::string>();
  a.reason = j.value("reason", std::string());
  a.message = j.value("message", std::string());
  a.log = j.value("log", std::string());
  a.error_line = get_optional<int>(j, "error_line");
  a.variant = j.value("variant", std::string());
  a.params = j.value("params", std::map<std::string, std::string>());
  a.time_us = get_optional<double>(j, "time_us");
  a.baseline_us = get_optional<double>(j, "baseline_us");
  a.speedup = get_optional<double>(j, "speedup");
  a.speedup_low = get_optional<double>(j, "speedup_low");
  a.speedup_high = get_optional<double>(j, "speedup_high");
  a.roofline_pct = get_optional<double>(j, "roofline_pct");
  a.reward = j.value("reward", 0.0);
  a.diagnosis = j.value("diagnosis", std::string());
  a.bound = j.value("bound", std::string());
  a.improved_bound = j.value("improved_bound", std::string());
  a.gpu = j.value("gpu", std::string());
  a.kept = j.value("kept", false);
  a.at_s = j.value("at_s", 0.0);
  a.elapsed_s = j.value("elapsed_s", 0.0);
  a.phase_ms = j.value("phase_ms", std::map<std::string, double>());
  a.bench_run_id = j.value("bench_run_id", std::int64_t{0});
  a.source_sha256 = j.value("source_sha256", std::string());
  a.reply_sha256 = j.value("reply_sha256", std::string());
  a.request_sha256 = j.value("request_sha256", std::string());
  a.answer_sha256 = j.value("answer_sha256", std::string());
  return a;
}

}  // namespace blaster
