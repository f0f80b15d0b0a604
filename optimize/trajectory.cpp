#include "optimize/trajectory.hpp"

#include <cctype>
#include <charconv>
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
#include "optimize/optimize_loop.hpp"
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

namespace {

// The plan's JSON in the leading /* blaster ... */ comment, or null.
json launch_plan_of(const std::string& source) {
  const auto open = source.find("/* blaster");
  if (open == std::string::npos) return nullptr;
  const auto close = source.find("*/", open);
  if (close == std::string::npos) return nullptr;
  const auto body = source.substr(open + 10, close - open - 10);
  return json::parse(body, nullptr, /*allow_exceptions=*/false);
}

// "a ,  b\n c" as "a, b c": one line, single spaces.
std::string one_spaced(std::string_view text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space && c != ',' && c != ')') out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// The parameter list of `kernel` where `source` defines it as a __global__ function.
std::optional<std::string> declared_parameters(const std::string& source, const std::string& kernel) {
  for (std::size_t at = source.find("__global__"); at != std::string::npos;
       at = source.find("__global__", at + 1)) {
    const auto paren = source.find('(', at);
    if (paren == std::string::npos) return std::nullopt;
    std::string_view head(source.data() + at, paren - at);
    while (!head.empty() && (head.back() == ' ' || head.back() == '\n' || head.back() == '\t')) {
      head.remove_suffix(1);
    }
    if (head.size() < kernel.size() || head.substr(head.size() - kernel.size()) != kernel) continue;
    const char before = head.size() > kernel.size() ? head[head.size() - kernel.size() - 1] : ' ';
    if (std::isalnum(static_cast<unsigned char>(before)) || before == '_') continue;
    int depth = 0;
    for (std::size_t i = paren; i < source.size(); ++i) {
      if (source[i] == '(') ++depth;
      if (source[i] == ')' && --depth == 0) {
        return one_spaced(std::string_view(source).substr(paren + 1, i - paren - 1));
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// Each of the plan's args with the type the task declares for it: "f16* out", "i32 B", "H*W".
std::string typed_args(const json& args, const json& contract) {
  const json buffers = contract.value("buffers", json::object());
  const json symbols = contract.value("symbols", json::object());
  std::vector<std::string> parts;
  for (const auto& arg : args) {
    const std::string name = arg.is_string() ? arg.get<std::string>() : arg.dump();
    if (buffers.contains(name) && buffers[name].is_object()) {
      parts.push_back(fmt::format("{}* {}", buffers[name].value("dtype", std::string("?")), name));
    } else if (symbols.contains(name) && symbols[name].is_object()) {
      parts.push_back(fmt::format("{} {}", symbols[name].value("type", std::string("?")), name));
    } else {
      parts.push_back(name);
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The objects a session's transcript needs, read or refused by name.
std::string required_object(const object_reader& objects, const std::string& digest,
                            std::string_view what) {
  const auto bytes = objects(digest);
  if (!bytes) BLASTER_THROW("object {} ({}) is missing", digest, what);
  return *bytes;
}

// One turn of the transcript: the line exactly as it was written, with its digest. A line that
// is not UTF-8 cannot be a JSON string: its stray bytes show as U+FFFD, the digest names the
// bytes as they came.
json exact_turn(std::string_view role, const std::string& bytes, const std::string& digest) {
  json turn = {{"role", role}, {"content", valid_utf8(bytes)}, {"blaster_sha256", digest}};
  if (invalid_utf8_at(bytes)) turn["blaster_not_utf8"] = true;
  return turn;
}

}  // namespace

std::string kernel_signature(const std::string& baseline_source, const json& contract) {
  const json plan = launch_plan_of(baseline_source);
  if (plan.is_object() && plan.contains("launch") && plan["launch"].is_array() &&
      !plan["launch"].empty() && plan["launch"][0].is_object()) {
    const json& first = plan["launch"][0];
    std::string kernel = first.value("kernel", std::string());
    kernel = kernel.substr(0, kernel.find('<'));
    if (const auto declared = declared_parameters(baseline_source, kernel)) return *declared;
    if (first.contains("args") && first["args"].is_array()) {
      return typed_args(first["args"], contract);
    }
  }
  // No plan to read: the task's buffers, then its symbols.
  json names = json::array();
  for (const char* kind : {"buffers", "symbols"}) {
    const json declared = contract.value(kind, json::object());
    for (const auto& [name, value] : declared.items()) names.push_back(name);
  }
  return typed_args(names, contract);
}

json params_as_numbers(const std::map<std::string, std::string>& params) {
  json out = json::object();
  for (const auto& [name, value] : params) {
    long long whole = 0;
    const char* end = value.data() + value.size();
    if (!value.empty() && std::from_chars(value.data(), end, whole).ptr == end) {
      out[name] = whole;
      continue;
    }
    double real = 0.0;
    if (!value.empty() && std::from_chars(value.data(), end, real).ptr == end && std::isfinite(real)) {
      out[name] = real;
      continue;
    }
    out[name] = value;
  }
  return out;
}

json render_trajectory(const session_records& records, const object_reader& objects) {
  const json& session = records.session;
  if (!session.is_object() || session.value("protocol", "") != protocol_name ||
      !session.contains("task_brief") || !session["task_brief"].is_object()) {
    BLASTER_INPUT_ERROR("run {}'s record is not an optimize session's", records.run_id);
  }
  const auto& steps = records.steps;
  const json& task = session.at("task_brief");
  const json device = session.value("device", json(nullptr));
  const std::string gpu_name =
      device.is_object() ? device.value("name", std::string()) : std::string("no GPU");
  const std::string gpu = gpu_name.rfind("NVIDIA ", 0) == 0 ? gpu_name.substr(7) : gpu_name;
  std::string arch = device.is_object() ? device.value("arch", std::string()) : std::string();
  if (arch.rfind("sm_", 0) == 0) arch = "sm" + arch.substr(3);
  const std::string baseline_source = task.value("baseline_source", "");

  json messages = json::array();
  messages.push_back(
      {{"role", "system"},
       {"content",
        fmt::format("You optimize one CUDA kernel for speed on a {}, speaking {}: each user turn "
                    "is a request line (JSON: the task, the device, the best step so far with its "
                    "source, the last attempts with their feedback, the memory of other "
                    "sessions), each assistant turn one reply line: {{\"source\": \"...\", "
                    "\"hypothesis\": \"...\", \"tags\": [...]}}, or {{\"stop\": true}}. The "
                    "candidate format: {}",
                    gpu_name, protocol_name, candidate_format())}});
  // A step with no request line (serve's, eval's: a client sent it unasked) has its task and
  // its result rendered around it, as the format's feedback turns.
  const auto task_turn = [&] {
    return json{{"role", "user"},
                {"content", fmt::format("Task {}: {}\nShape: {} ({}), dtype {}, GPU {}.\nBaseline "
                                        "source:\n{}",
                                        task.value("name", ""), task.value("title", ""),
                                        task.value("shape", ""), task.value("case", ""),
                                        format_dtype(task.value("dtype", "")), gpu_name,
                                        baseline_source)}};
  };
  json trace = json::array();
  std::optional<double> best_reward;
  int judged = 0;
  int unjudged = 0;
  for (const attempt& a : steps) {
    const std::string reply = required_object(objects, a.reply_sha256,
                                              fmt::format("the reply of step {}", a.step));
    if (!a.request_sha256.empty()) {
      messages.push_back(exact_turn(
          "user",
          required_object(objects, a.request_sha256, fmt::format("the request of step {}", a.step)),
          a.request_sha256));
    } else if (messages.back().at("role") != "user") {
      messages.push_back(task_turn());
    }
    json said = exact_turn("assistant", reply, a.reply_sha256);
    said["blaster_step"] = a.step;
    // A line that was no candidate (not JSON, not UTF-8, no source) is no kernel: flagged, so
    // that a trainer can keep it out of what it imitates.
    if (a.source_sha256.empty()) said["blaster_not_a_candidate"] = true;
    if (a.status == "unjudged") said["blaster_unjudged"] = true;
    messages.push_back(std::move(said));
    // Best so far goes by reward, as the session keeps its best.
    const bool best_so_far = a.status == "ok" && (!best_reward || a.reward > *best_reward);
    if (best_so_far) best_reward = a.reward;
    if (!a.answer_sha256.empty()) {
      messages.push_back(exact_turn(
          "user",
          required_object(objects, a.answer_sha256, fmt::format("the answer of step {}", a.step)),
          a.answer_sha256));
    } else if (a.request_sha256.empty()) {
      messages.push_back({{"role", "user"},
                          {"content", fmt::format("[t+{}] {}", hms(a.at_s + a.elapsed_s),
                                                  result_line(a, best_so_far))}});
    }
    if (a.status == "unjudged") {
      ++unjudged;  // compiled where no GPU could judge it: not a step of the format
      continue;
    }
    ++judged;
    json t = {{"tag", !a.tags.empty() ? a.tags.front() : fmt::format("step {}", a.step)},
              {"kind", a.kind.empty() ? "rewrite" : a.kind},
              {"params", params_as_numbers(a.params)},
              {"status", a.status},
              {"kept", a.kept}};
    if (a.status == "ok" && a.time_us) t["time"] = *a.time_us / 1000.0;
    // blaster's own fields, beside the format's.
    t["step"] = a.step;
    t["reason"] = a.reason;
    t["hypothesis"] = a.hypothesis;
    t["tags"] = a.tags;
    t["candidate"] = !a.source_sha256.empty();
    t["speedup"] = a.speedup ? json(*a.speedup) : json(nullptr);
    t["speedup_interval"] =
        a.speedup_low && a.speedup_high ? json{*a.speedup_low, *a.speedup_high} : json(nullptr);
    t["reward"] = a.reward;
    t["reward_sessions"] = a.reward_sessions;
    if (a.sessions > 0) t["sessions_asked"] = a.sessions;
    t["diagnosis"] = a.diagnosis;
    t["source_sha256"] = a.source_sha256;
    t["reply_sha256"] = a.reply_sha256;
    t["request_sha256"] = a.request_sha256;
    if (!a.answer_sha256.empty()) t["answer_sha256"] = a.answer_sha256;
    t["bench_run_id"] = a.bench_run_id;
    trace.push_back(std::move(t));
  }
  // The request no step answered, and the stop line that answered it: the conversation's end.
  const std::string final_request = session.value("final_request_sha256", "");
  const std::string final_reply = session.value("final_reply_sha256", "");
  if (!final_request.empty()) {
    messages.push_back(exact_turn(
        "user", required_object(objects, final_request, "the session's last request"),
        final_request));
  }
  if (!final_reply.empty()) {
    json stop = exact_turn(
        "assistant", required_object(objects, final_reply, "the session's stop line"),
        final_reply);
    stop["blaster_not_a_candidate"] = true;
    messages.push_back(std::move(stop));
  }
  json best = nullptr;
  for (const attempt& a : steps) {
    if (a.kept && a.time_us)
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
      {"signature", kernel_signature(baseline_source, task.value("contract", json::object()))},
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
      {"blaster_run_id", records.run_id},
      {"blaster_case", task.value("case", "")},
      {"blaster_ended", session.value("ended", "")},
      {"blaster_unjudged_steps", unjudged},
      {"blaster_session_sha256", records.session_sha256}};
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
  session_records s{.run_id = run_id,
                    .session = json::parse(object_text(records, run->report_sha256), nullptr,
                                           /*allow_exceptions=*/false),
                    .session_sha256 = run->report_sha256,
                    .steps = optimization_memory(records).steps_of(run_id)};
  return render_trajectory(s, [&](const std::string& digest) -> std::optional<std::string> {
    return records.cas().get(digest);
  });
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
          // The session's last request and stop line, which no row cites.
          const json session = json::parse(object_text(records, catalog.find_run(run)->report_sha256),
                                           nullptr, /*allow_exceptions=*/false);
          for (const char* key : {"final_request_sha256", "final_reply_sha256"}) {
            if (session.is_object() && session.contains(key) && session[key].is_string()) {
              objects.insert(session[key].get<std::string>());
            }
          }
          // The runs that timed the baseline alone, one per stretch of the session: each
          // stretch's first request's device and time.
          json timed = session.is_object() ? session.value("baselines", json::array()) : json();
          if (!timed.is_array()) timed = json::array();
          if (session.is_object() && session.contains("baseline")) {
            timed.push_back(session["baseline"]);
          }
          for (const json& t : timed) {
            const std::int64_t id = baseline_timing_from_json(t).bench_run_id;
            if (id > 0) judged_by.insert(id);
          }
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
