#include "optimize/trajectory.hpp"

#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"
#include "optimize/attempt.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/protocol.hpp"
#include "optimize/untrusted_text.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

std::string object_text(store& records, const std::string& digest) {
  if (digest.empty()) return {};
  const auto bytes = records.cas().get(digest);
  if (!bytes) BLASTER_THROW("the store lacks object {}, which a step cites", digest);
  return *bytes;
}

// The format's dtype names: fp16, bf16, fp32, fp8 ...
std::string format_dtype(const std::string& dtype) {
  if (dtype == "f16") return "fp16";
  if (dtype == "f32") return "fp32";
  if (dtype == "f64") return "fp64";
  return dtype;
}

// "B=16 C=64" as {"B": 16, "C": 64}.
json shape_object(const std::string& shape) {
  json out = json::object();
  std::istringstream words(shape);
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string value = word.substr(eq + 1);
    try {
      out[word.substr(0, eq)] = std::stoll(value);
    } catch (const std::exception&) {
      out[word.substr(0, eq)] = value;
    }
  }
  return out;
}

// The kernel's parameters as the task states them: each buffer with its dtype and shape, then
// each symbol with its type.
std::string signature_of(const json& contract) {
  std::vector<std::string> parts;
  const json buffers = contract.value("buffers", json::object());
  const json symbols = contract.value("symbols", json::object());
  for (const auto& [name, b] : buffers.items()) {
    std::string dims;
    const json shape = b.value("shape", json::array());
    for (const auto& d : shape) {
      if (!dims.empty()) dims += ", ";
      dims += d.is_string() ? d.get<std::string>() : d.dump();
    }
    parts.push_back(fmt::format("{} {}[{}] ({})", b.value("dtype", std::string("?")), name, dims,
                                b.value("role", std::string("?"))));
  }
  for (const auto& [name, s] : symbols.items()) {
    parts.push_back(fmt::format("{} {}", s.value("type", std::string("?")), name));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string result_line(const attempt& a, bool best_so_far) {
  if (a.status == "ok") {
    return fmt::format("RESULT ok {:.4f} ms ({:.2f}x over baseline{}){}", *a.time_us / 1000.0,
                       a.speedup.value_or(0.0), best_so_far ? ", best so far" : "",
                       a.diagnosis.empty() ? "" : "; " + a.diagnosis);
  }
  if (a.status == "compileerror") {
    const std::string detail = !a.log.empty() ? a.log.substr(0, a.log.find('\n')) : a.message;
    return fmt::format("RESULT compile error: {}: {}", a.reason, detail);
  }
  return fmt::format("RESULT wrong result: {}: {}", a.reason, a.message);
}

// The runs whose steps are candidates judged one by one: optimize's, serve's and eval's.
bool is_session_command(std::string_view command) {
  for (const std::string_view prefix : {"blaster optimize ", "blaster serve ", "blaster eval "}) {
    if (command.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

std::int64_t resolve_session(store& records, std::string_view reference) {
  if (reference != "latest") return run_catalog(records).resolve(reference);
  statement s = records.db().prepare(
      "SELECT id FROM runs WHERE command LIKE 'blaster optimize %' OR command LIKE 'blaster "
      "serve %' OR command LIKE 'blaster eval %' ORDER BY id DESC LIMIT 1");
  if (!s.step()) {
    BLASTER_INPUT_ERROR(
        "{} holds no session; `blaster optimize --task T --proposer CMD` or "
        "`blaster serve --task T` makes one",
        records.home().string());
  }
  return s.column_int64(0);
}

std::string hms(double seconds) {
  const auto total = static_cast<long long>(std::floor(std::max(0.0, seconds)));
  return fmt::format("{}:{:02}:{:02}", total / 3600, (total / 60) % 60, total % 60);
}

json trajectory_of(store& records, std::int64_t run_id) {
  run_catalog catalog(records);
  const auto run = catalog.find_run(run_id);
  if (!run) BLASTER_INPUT_ERROR("run {} is not in {}", run_id, records.home().string());
  if (!is_session_command(run->command)) {
    BLASTER_INPUT_ERROR(
        "run {} is not an optimize, serve or eval session (it ran `{}`); "
        "`blaster runs` lists them",
        run_id, run->command);
  }
  if (run->report_sha256.empty()) {
    BLASTER_INPUT_ERROR(
        "run {} has no record of its session (status {}): it is still running, "
        "or it failed before its end",
        run_id, run->status);
  }
  const json session = json::parse(object_text(records, run->report_sha256), nullptr, false);
  if (!session.is_object() || session.value("protocol", "") != protocol_name ||
      !session.contains("task_brief")) {
    BLASTER_INPUT_ERROR("run {}'s record is not an optimize session's", run_id);
  }
  const auto steps = optimization_memory(records).steps_of(run_id);
  const json& task = session.at("task_brief");
  const json device = session.value("device", json(nullptr));
  const std::string gpu_name =
      device.is_object() ? device.value("name", std::string()) : std::string("no GPU");
  const std::string gpu = gpu_name.rfind("NVIDIA ", 0) == 0 ? gpu_name.substr(7) : gpu_name;
  std::string arch = device.is_object() ? device.value("arch", std::string()) : std::string();
  if (arch.rfind("sm_", 0) == 0) arch = "sm" + arch.substr(3);

  json messages = json::array();
  messages.push_back(
      {{"role", "system"},
       {"content", fmt::format("You optimize one CUDA kernel for speed on a {}. Reply with the "
                               "full kernel source only. The candidate format: {}",
                               gpu_name, candidate_format())}});
  messages.push_back(
      {{"role", "user"},
       {"content",
        fmt::format("Task {}: {}\nShape: {} ({}), dtype {}, GPU {}.\nBaseline "
                    "source:\n{}",
                    task.value("name", ""), task.value("title", ""), task.value("shape", ""),
                    task.value("case", ""), format_dtype(task.value("dtype", "")), gpu_name,
                    task.value("baseline_source", ""))}});
  json trace = json::array();
  std::optional<double> best_time;
  int judged = 0;
  int unjudged = 0;
  for (const attempt& a : steps) {
    if (a.status == "unjudged") {
      ++unjudged;  // compiled where no GPU could judge it: not a step of the format
      continue;
    }
    ++judged;
    const bool best_so_far = a.status == "ok" && (!best_time || *a.time_us < *best_time);
    if (best_so_far) best_time = a.time_us;
    const std::string sent = a.source_sha256.empty() ? object_text(records, a.reply_sha256)
                                                     : object_text(records, a.source_sha256);
    // A reply that was not UTF-8 cannot be a JSON string: its stray bytes show as U+FFFD here,
    // and the CAS keeps them as they came.
    messages.push_back({{"role", "assistant"}, {"content", valid_utf8(sent)}});
    messages.push_back({{"role", "user"},
                        {"content", fmt::format("[t+{}] {}", hms(a.at_s + a.elapsed_s),
                                                result_line(a, best_so_far))}});
    json t = {{"tag", !a.tags.empty() ? a.tags.front() : fmt::format("step {}", a.step)},
              {"kind", a.kind.empty() ? "rewrite" : a.kind},
              {"params", a.params},
              {"status", a.status},
              {"kept", a.kept}};
    if (a.status == "ok") t["time"] = *a.time_us / 1000.0;
    // blaster's own fields, beside the format's.
    t["step"] = a.step;
    t["reason"] = a.reason;
    t["hypothesis"] = a.hypothesis;
    t["tags"] = a.tags;
    t["speedup"] = a.speedup ? json(*a.speedup) : json(nullptr);
    t["speedup_interval"] =
        a.speedup_low && a.speedup_high ? json{*a.speedup_low, *a.speedup_high} : json(nullptr);
    t["reward"] = a.reward;
    t["diagnosis"] = a.diagnosis;
    t["source_sha256"] = a.source_sha256;
    t["reply_sha256"] = a.reply_sha256;
    t["bench_run_id"] = a.bench_run_id;
    trace.push_back(std::move(t));
  }
  json best = nullptr;
  for (const attempt& a : steps) {
    if (a.kept)
      best = {
          {"step", a.step}, {"time_ms", *a.time_us / 1000.0}, {"speedup", a.speedup.value_or(0.0)}};
  }
  const double elapsed = session.value("elapsed_s", 0.0);
  const json baseline = session.value("baseline_us", json(nullptr));
  return {
      {"op", task.value("name", "")},
      {"impl", "cuda"},
      {"gpu", gpu},
      {"arch", arch},
      {"dtype", format_dtype(task.value("dtype", ""))},
      {"shape", shape_object(task.value("shape", ""))},
      {"signature", signature_of(task.value("contract", json::object()))},
      {"desc", task.value("title", "")},
      {"baseline_ms", baseline.is_number() ? json(baseline.get<double>() / 1000.0) : json(nullptr)},
      {"best", best},
      {"attempts", judged},
      {"elapsed_s", elapsed},
      {"elapsed_hms", hms(elapsed)},
      {"num_steps", judged},
      {"messages", messages},
      {"trace", trace},
      // blaster's own fields.
      {"blaster_run_id", run_id},
      {"blaster_case", task.value("case", "")},
      {"blaster_ended", session.value("ended", "")},
      {"blaster_unjudged_steps", unjudged},
      {"blaster_session_sha256", run->report_sha256}};
}

bundle_written export_trajectories(store& records, const std::vector<std::int64_t>& runs,
                                   const std::filesystem::path& out,
                                   const ed25519_key* signing_key) {
  if (runs.empty()) BLASTER_INPUT_ERROR("no run to export: name one with --run");
  // Everything is read before anything is written: a bad run leaves no folder behind.
  std::string lines;
  for (std::int64_t run : runs) lines += trajectory_of(records, run).dump() + "\n";
  run_catalog catalog(records);
  return write_bundle(
      out,
      [&](const std::filesystem::path& folder) {
        write_file_atomically(folder / "trajectories.jsonl", lines);
        std::set<std::string> objects;
        std::set<std::int64_t> judged_by;
        for (std::int64_t run : runs) {
          const auto dir = folder / "sessions" / std::to_string(run);
          std::filesystem::create_directories(dir);
          write_file_atomically(dir / "session.json",
                                object_text(records, catalog.find_run(run)->report_sha256));
          const nlohmann::json rows = catalog.records_of(run);
          // A step an older blaster stored may hold bytes that are not UTF-8: shown as U+FFFD.
          write_file_atomically(
              dir / "run.json",
              rows.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
          for (const auto& c : objects_cited_in(rows)) objects.insert(c.sha256);
          for (const attempt& a : optimization_memory(records).steps_of(run)) {
            if (a.bench_run_id > 0) judged_by.insert(a.bench_run_id);
          }
        }
        std::filesystem::create_directories(folder / "objects");
        for (const std::string& digest : objects) {
          write_file_atomically(folder / "objects" / digest, object_text(records, digest));
        }
        if (!judged_by.empty()) std::filesystem::create_directories(folder / "runs");
        for (std::int64_t bench_run : judged_by) {
          static_cast<void>(export_bundle(records, bench_run,
                                          folder / "runs" / std::to_string(bench_run), signing_key,
                                          /*allow_incomplete=*/true, folder / "objects"));
        }
      },
      signing_key);
}

}  // namespace blaster
