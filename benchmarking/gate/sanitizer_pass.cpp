#include "benchmarking/gate/sanitizer_pass.hpp"

#include <unistd.h>

#include <chrono>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/cuda_tools.hpp"
#include "core/file_io.hpp"
#include "core/parallel_for.hpp"

namespace blaster {
namespace {

// compute-sanitizer's exit code when it found errors, chosen apart from the worker's own.
constexpr int errors_exit_code = 86;
constexpr std::size_t log_lines_kept = 40;

std::string strip_prefix(const std::string& line) {
  const auto start = line.find_first_not_of("= ");
  return start == std::string::npos ? std::string() : line.substr(start);
}

}  // namespace

std::optional<std::filesystem::path> find_compute_sanitizer() {
  return find_cuda_tool("compute-sanitizer");
}

std::vector<gate_check> sanitizer_checks(const std::vector<gate_check>& checks,
                                         std::size_t most_bytes) {
  std::vector<gate_check> out;
  for (const auto& c : checks) {
    if (!c.repeat) continue;  // the first seed of a case that is not large
    std::size_t bytes = 0;
    for (const auto& slot : c.inputs) bytes += slot.bytes;
    for (const auto& slot : c.outputs) bytes += slot.bytes;
    if (bytes > most_bytes) continue;
    out.push_back(c);
    out.back().repeat = false;  // once: the gate proved determinism already
  }
  return out;
}

sanitizer_report parse_sanitizer_log(const std::string& tool, const std::string& log) {
  sanitizer_report r;
  r.tool = tool;
  static const std::regex summary(R"(ERROR SUMMARY: (\d+) error)");
  std::smatch m;
  if (std::regex_search(log, m, summary)) r.errors = std::stoi(m[1].str());
  std::stringstream lines(log);
  std::size_t kept = 0;
  for (std::string line; std::getline(lines, line);) {
    if (kept++ < log_lines_kept) r.log += line + "\n";
    const std::string text = strip_prefix(line);
    if (r.first_error.empty() && !text.empty() && text.rfind("COMPUTE-SANITIZER", 0) != 0 &&
        text.rfind("ERROR SUMMARY", 0) != 0 && text.rfind("RACECHECK SUMMARY", 0) != 0 &&
        line.rfind("=========     ", 0) != 0) {
      r.first_error = text;
    }
  }
  if (r.errors == 0) r.first_error.clear();
  return r;
}

nlohmann::json to_json(const sanitizer_report& r) {
  nlohmann::json j = {{"tool", r.tool}, {"errors", r.errors}, {"log", r.log}, {"wall_s", r.wall_s}};
  if (!r.first_error.empty()) j["first_error"] = r.first_error;
  if (!r.failure.empty()) j["failure"] = r.failure;
  return j;
}

sanitizer_report sanitizer_report_from_json(const nlohmann::json& j) {
  return {.tool = j.at("tool").get<std::string>(),
          .errors = j.at("errors").get<int>(),
          .first_error = j.value("first_error", std::string()),
          .log = j.at("log").get<std::string>(),
          .failure = j.value("failure", std::string()),
          .wall_s = j.value("wall_s", 0.0)};  // not kept before the tools were timed
}

sanitizer_outcome run_sanitizers(const gate_data& data, worker_request request,
                                 const worker_launcher& launcher,
                                 const std::filesystem::path& sanitizer,
                                 std::chrono::milliseconds deadline) {
  sanitizer_outcome out;
  request.phase = worker_phase::gate;
  request.checks = sanitizer_checks(data.checks(), std::size_t{64} << 20U);
  request.inputs_file = data.inputs_file();
  // The lane's outputs file, which every tool's worker writes at once: each check runs once
  // (sanitizer_checks), so no worker reads back what it wrote, and the gate's outputs that the
  // timing compares with were kept apart before.
  request.outputs_file = data.outputs_file(launcher.lane);
  request.outputs_base = 0;
  if (request.checks.empty()) return out;
  out.reports.resize(sanitizer_tools.size());
  const auto started = std::chrono::steady_clock::now();
  on_every_lane(sanitizer_tools.size(), [&](std::size_t k) {
    const std::string& tool = sanitizer_tools[k];
    const auto log_file =
        launcher.dir / fmt::format("sanitizer-{}-{}-{}.log", tool, ::getpid(), launcher.lane);
    std::vector<std::string> wrapper = {sanitizer.string(), "--tool", tool,
                                        // The harness probes kernel parameters until the driver
                                        // says no: those refusals are not the kernel's errors.
                                        "--report-api-errors", "no", "--error-exitcode",
                                        std::to_string(errors_exit_code), "--print-limit", "10",
                                        "--log-file", log_file.string()};
    const auto shared = deadline * static_cast<long>(sanitizer_tools.size());
    const worker_answer answer = launcher.run(request, shared, wrapper);
    std::string log;
    if (std::filesystem::exists(log_file)) {
      log = read_file(log_file);
      std::error_code ignored;
      std::filesystem::remove(log_file, ignored);
    }
    sanitizer_report report = parse_sanitizer_log(tool, log);
    report.wall_s = answer.wall_s;
    if (report.errors == 0 && answer.exit_code == errors_exit_code) report.errors = 1;
    if (!answer.result) {
      report.failure = answer.why;
    } else if (answer.result->failure) {
      report.failure = answer.result->failure->message;
    }
    out.reports[k] = std::move(report);
  });
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // A worker that did not finish under a tool (a deadline that its slowdown outgrew, a device
  // the tool does not support) is on record, but only an error the tool reports rejects.
  for (const sanitizer_report& report : out.reports) {
    if (report.errors == 0) continue;
    out.reason = reason_code::sanitizer_error;
    out.message = fmt::format("compute-sanitizer {} reported {} error{} on the small cases: {}",
                              report.tool, report.errors, report.errors == 1 ? "" : "s",
                              report.first_error.empty() ? "see its log" : report.first_error);
    break;
  }
  return out;
}

}  // namespace blaster
