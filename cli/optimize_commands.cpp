// blaster optimize, blaster proposer, blaster memory, blaster trajectories export: the
// optimization loop, its built-in proposer, what it remembers, and its sessions as trajectories.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "benchmarking/candidate/candidate.hpp"
#include "cli/commands.hpp"
#include "cli/error_report.hpp"
#include "cli/judge_flags.hpp"
#include "cli/optimize_flags.hpp"
#include "cli/step_log.hpp"
#include "cli/store_access.hpp"
#include "core/error.hpp"
#include "core/worker_process.hpp"
#include "evidence/signature.hpp"
#include "evidence/table_renderer.hpp"
#include "optimize/bench_evaluator.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/optimize_loop.hpp"
#include "optimize/params_search.hpp"
#include "optimize/session_resume.hpp"
#include "optimize/trajectory.hpp"
#include "optimize/untrusted_text.hpp"

namespace blaster::cli {
namespace {

result_table memory_table(const std::vector<optimization_memory::entry>& entries) {
  result_table t;
  t.columns = {{.metric = {.tag = "run_id", .name = "run", .format = "{:.0f}"}, .width = 4},
               {.metric = {.tag = "step", .name = "step", .format = "{:.0f}"}, .width = 4},
               {.metric = {.tag = "task", .name = "task"}, .left = true},
               {.metric = {.tag = "gpu", .name = "gpu"}, .left = true},
               {.metric = {.tag = "status", .name = "status"}, .left = true},
               {.metric = {.tag = "reason", .name = "reason"}, .left = true},
               {.metric = {.tag = "speedup", .name = "speedup [95%]"}, .left = true},
               {.metric = {.tag = "reward", .name = "reward", .format = "{:.3f}"}},
               {.metric = {.tag = "improved_bound", .name = "improved"}, .left = true},
               {.metric = {.tag = "bound", .name = "bound"}, .left = true},
               {.metric = {.tag = "tags", .name = "tags"}, .left = true},
               {.metric = {.tag = "hypothesis", .name = "hypothesis"}, .left = true}};
  t.summary_after = t.columns.size();
  const auto or_dash = [](const std::string& text) {
    return text.empty() ? std::string("-") : printable_text(text);
  };
  // What a proposer wrote is shown, never obeyed: its escapes are printed as text.
  for (const auto& e : entries) {
    const attempt& a = e.step;
    t.rows.push_back(
        {.cells = {static_cast<double>(e.run_id), static_cast<double>(a.step),
                   printable_text(e.task), or_dash(a.gpu), printable_text(a.status),
                   or_dash(a.reason), interval_text(a), a.reward, or_dash(a.improved_bound),
                   or_dash(a.bound),
                   a.tags.empty() ? std::string("-")
                                  : printable_text(fmt::format("{}", fmt::join(a.tags, ","))),
                   a.hypothesis.empty() ? std::string("-") : printable_text(a.hypothesis)}});
  }
  return t;
}

// A word for sh -c, quoted so that no character in it is special.
std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The files whose params the built-in proposer searches: the given ones, else kernels/<task>/.
// .cu files only, since a step's source is judged as a .cu file (optimize/PROTOCOL.md): a file of
// another kind found in a folder is left out with one line, and one named on its own is refused.
std::vector<std::filesystem::path> searched_files(const std::filesystem::path& root,
                                                  const std::string& task,
                                                  const std::vector<std::filesystem::path>& given) {
  task_candidates found = discover_candidates(root, task, given, compile_limits{});
  found.files.erase(found.files.begin());  // the baseline
  left_out_candidates not_cuda{
      .files = {},
      .why = "the params search proposes .cu sources only, which a step judges as CUDA C++"};
  for (const auto& l : found.left_out) {
    not_cuda.files.insert(not_cuda.files.end(), l.files.begin(), l.files.end());
  }
  std::vector<std::filesystem::path> files;
  for (auto& file : found.files) {
    if (candidate_kind_of(file).value_or(candidate_kind::cuda) == candidate_kind::cuda) {
      files.push_back(std::move(file));
    } else if (std::find(given.begin(), given.end(), file) != given.end()) {
      BLASTER_INPUT_ERROR(
          "{}: the params search proposes .cu sources only, which a step judges as CUDA C++ "
          "(optimize/PROTOCOL.md); `blaster tune --task {} --candidate {}` times this "
          "candidate's params",
          file.string(), task, file.string());
    } else {
      not_cuda.files.push_back(std::move(file));
    }
  }
  if (!not_cuda.files.empty()) {
    std::sort(not_cuda.files.begin(), not_cuda.files.end());
    spdlog::warn("{}", describe(not_cuda, root));
  }
  if (files.empty()) {
    BLASTER_INPUT_ERROR(
        "{}: no candidate files to search; add one under kernels/{}/ or name one "
        "with --candidate",
        task, task);
  }
  return files;
}

// `blaster optimize --proposer params` stands for this command: blaster itself as the proposer.
std::string params_proposer_command(const std::filesystem::path& root, const std::string& task,
                                    const std::vector<std::filesystem::path>& candidates,
                                    int sessions) {
  std::string command = fmt::format("{} --root {} proposer params --task {} --sessions {}",
                                    shell_quoted(this_executable().string()),
                                    shell_quoted(root.string()),
                                    shell_quoted(task), sessions);
  for (const auto& c : candidates) {
    command += " --candidate " + shell_quoted(std::filesystem::absolute(c).string());
  }
  return command;
}

// What the user must know of the proposer's box, whatever --quiet says: that it was not
// confined, and what had to be killed with it.
void report_box(const nlohmann::json& box) {
  if (!box.is_object()) return;
  const nlohmann::json confinement = box.value("confinement", nlohmann::json::object());
  if (!confinement.value("confined", true)) {
    std::cerr << "blaster: the proposer ran without file confinement: "
              << confinement.value("why", std::string("Landlock is not available")) << '\n';
  }
  const nlohmann::json ended = box.value("ended", nlohmann::json::object());
  if (const int moved = ended.value("moved_out", 0); moved > 0) {
    std::cerr << fmt::format(
        "blaster: the proposer had moved {} process{} out of its process group; {} killed "
        "with it\n",
        moved, moved == 1 ? "" : "es", moved == 1 ? "it was" : "they were");
  }
  if (const int left = ended.value("left_running", 0); left > 0) {
    std::cerr << fmt::format("blaster: {} of the proposer's processes would not die\n", left);
  }
}

}  // namespace

command_fn add_optimize_command(CLI::App& app, const global_options& global) {
  auto f = std::make_shared<optimize_flags>();
  CLI::App* cmd = app.add_subcommand(
      "optimize",
      "Run an optimization loop: a proposer (any program) proposes kernels, blaster judges each "
      "one as bench does and answers with a structured verdict, and every step is recorded.");
  cmd->footer(
      "The proposer is started once with `sh -c CMD` and speaks newline-delimited JSON: for each "
      "step blaster writes one request line on its standard input (the task's contract and "
      "baseline, the device, the best source so far with its verdict, the last attempts with "
      "their feedback, and matching entries of the optimization memory) and reads one reply line "
      "from its standard output: {\"source\": \"...\", \"hypothesis\": \"...\", \"tags\": [...]}, "
      "or {\"stop\": true}. optimize/PROTOCOL.md has the schemas. The proposer's standard error "
      "goes to proposer.log in the run's folder under the home (its first 16 MiB).\n\n"
      "The proposer runs in a box: an empty folder of its own (its working folder, HOME and "
      "TMPDIR, removed afterwards), an environment of PATH, LANG, LANGUAGE, LC_*, TZ, TERM and "
      "the variables --proposer-env names (never BLASTER_*), and, where the kernel has Landlock, "
      "write access to that folder and /dev/null only (and, from Linux 6.12, no signals to "
      "blaster). Where the kernel has no Landlock, the proposer is not confined and can write "
      "wherever you can: blaster says so, and the session's record (box) too. It and everything "
      "it starts, processes that left its group included, are killed when the session ends or "
      "blaster does (kill -9 included). optimize/PROTOCOL.md says what the box does not stop.\n\n"
      "--proposer params is the built-in proposer (`blaster proposer params`): it searches the "
      "params of the task's candidate files (or --candidate) by successive halving, every "
      "configuration asking for one session (timed in --reward-sessions at least), then the "
      "faster half with twice the sessions, until one is left and confirmed with --sessions; "
      "without --steps it runs until it stops, and resumed it goes on from the recorded steps.\n\n"
      "Before the first request blaster times the baseline alone (a bench run of its own, named "
      "in the session's record as its baseline, and no step) and measures the device's "
      "ceilings: the first request carries the device (name, model, SMs, memory, the measured "
      "DRAM, L2 and matrix ceilings and launch floors) and the baseline's time. Without a GPU "
      "both are null, and the first candidate that compiles ends the session (exit 3).\n\n"
      "--resume RUN continues a session that was interrupted (blaster killed, the machine "
      "failed, or the proposer exited, hung or flooded) from its last recorded step: the same "
      "run, task and settings (it takes no flag that would change them; --task, if given, must "
      "be its task), with a new proposer. The steps that were under way when it was "
      "interrupted are recorded first, from their judging runs where those completed, else "
      "judged again; the new proposer's first request carries every step so far. New "
      "steps append to the run, and its trajectory exports as one session. A session that "
      "ended by its steps, its minutes or the proposer's stop, a run that is not an optimize "
      "session, and one still running are refused (exit 2).\n\n"
      "Each step is judged like `blaster bench --candidate STEP.cu --sessions N`: compiled, "
      "gated on every case, timed against the baseline in the same run, with the counters' "
      "diagnosis. Its reward is the lower bound of the speedup's 95% interval (0 when rejected, and with one timing session, which gives no interval). "
      "A reply that is not a candidate is a recorded step (invalid_reply), and the loop goes on; "
      "a proposer that hangs past --reply-timeout, floods, or exits ends the session cleanly.\n\n"
      "Examples:\n"
      "  blaster optimize --task rmsnorm --proposer 'python3 my_agent.py' --steps 20\n"
      "  blaster optimize --task softmax --proposer params --sessions 5\n"
      "  blaster optimize --resume latest\n"
      "  blaster trajectories export --run latest --out session-12\n\n"
      "Exit status: 0 the session ended by its steps, minutes or the proposer's stop; 1 the "
      "proposer hung, flooded or died, or the machine failed; 2 bad input; 3 no GPU to judge a "
      "candidate that compiled (what came before is recorded).");
  add_judge_flags(*cmd, f->judge, "step");
  // With --resume the session's record names its task and proposer.
  cmd->get_option("--task")->required(false);
  cmd->get_option("--gpus")->description(
      "GPUs to judge on, by the numbers `blaster doctor` lists (0,1 or all): with several, as "
      "many steps are under way at once, each judged on a GPU of its own while the proposer is "
      "asked for the next (its request names them in in_flight), and the steps are recorded in "
      "step order");
  cmd->add_option("--proposer", f->proposer,
                  "the proposer's command, run with sh -c; `params` for the built-in search");
  cmd->add_option("--resume", f->resume,
                  "continue this optimize session (a run id, or 'latest') from its last recorded "
                  "step, with the settings it was started with and a new proposer: for a session "
                  "that blaster's end, a failure or its proposer's end interrupted")
      ->type_name("RUN");
  cmd->add_option("--candidate", f->candidates,
                  "with --proposer params: a candidate file or folder whose params are searched "
                  "(repeatable; default kernels/<task>/)");
  cmd->add_option("--proposer-env", f->proposer_env,
                  "a variable of this environment that the proposer gets too, by name: an API "
                  "key, say (repeatable, or NAME,NAME; never BLASTER_*)")
      ->delimiter(',');
  cmd->add_option("--steps", f->steps, "at most this many steps (default 10 without --minutes)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--minutes", f->minutes, "ask for no new step after this many minutes")
      ->check(finite_range(0.01, 1e6));
  cmd->add_option("--history", f->history, "attempts each request carries back as feedback")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--reply-timeout", f->reply_timeout_s,
                  "seconds the proposer may take for one reply before it is killed")
      ->check(finite_range(0.1, 86400.0))
      ->capture_default_str();

  return [f, cmd, &global]() {
    require_format(global, {"table", "json"}, "optimize");
    optimize_options o;
    const auto root = resolve_root(global);
    std::unique_ptr<store> records;
    if (f->resume) {
      records = require_store(global);
      o.resume = resumed_session(*records, *cmd, *f);
    } else if (cmd->count("--task") == 0 || cmd->count("--proposer") == 0) {
      BLASTER_INPUT_ERROR("{} is required: optimize --task T --proposer CMD starts a session, "
                          "optimize --resume RUN continues one",
                          cmd->count("--task") == 0 ? "--task" : "--proposer");
    }
    const judge_flags& j = f->judge;
    o.task = brief_of(root, j.task, j.case_name);
    if (f->proposer.find_first_not_of(" \t\r\n") == std::string::npos) {
      BLASTER_INPUT_ERROR(
          "--proposer is empty: give the command that starts your proposer, or `params` for "
          "the built-in search");
    }
    for (const std::string& name : f->proposer_env) {
      if (const std::string why = refused_proposer_variable(name); !why.empty()) {
        BLASTER_INPUT_ERROR("--proposer-env {}", why);
      }
    }
    o.box.environment = f->proposer_env;
    const bool built_in = f->proposer == "params";
    if (!f->candidates.empty() && !built_in) {
      BLASTER_INPUT_ERROR(
          "--candidate goes with --proposer params; a proposer of your own "
          "writes its candidates itself");
    }
    o.proposer = built_in
                     ? params_proposer_command(
                           root, j.task, searched_files(root, j.task, f->candidates), j.sessions)
                     : f->proposer;
    o.steps = f->steps;
    o.minutes = f->minutes;
    // The built-in search stops by itself; any other proposer gets ten steps unless told.
    if (!o.steps && !o.minutes && !built_in) o.steps = 10;
    o.history = f->history;
    o.reply_deadline =
        std::chrono::milliseconds(static_cast<long long>(f->reply_timeout_s * 1000.0));
    o.command = fmt::format("blaster optimize --task {} --proposer {}", j.task,
                            built_in ? f->proposer : shell_quoted(f->proposer));
    for (const auto& c : f->candidates) o.command += " --candidate " + c.string();
    for (const auto& name : f->proposer_env) o.command += " --proposer-env " + name;
    if (f->steps) o.command += fmt::format(" --steps {}", *f->steps);
    if (f->minutes) o.command += fmt::format(" --minutes {:g}", *f->minutes);
    o.command += judge_flags_text(j);
    o.settings = settings_of(*f);

    if (!records) records = std::make_unique<store>(resolve_home(global.home));
    const bench_options b = judge_options(root, o.task, j, o.command);
    o.scratch = records->home() / "optimize";
    // With several GPUs a step is judged on each at once: an evaluator per GPU, each writing its
    // judging runs through a connection of its own, since the session records its steps through
    // the first while they judge.
    std::vector<std::unique_ptr<store>> lane_records;
    std::vector<std::unique_ptr<bench_evaluator>> evaluators;
    std::vector<step_evaluator*> lanes;
    const std::vector<gpu_choice> gpus = one_gpu_each(b.gpus);
    for (const gpu_choice& gpu : gpus) {
      bench_options lane = b;
      lane.gpus = gpu;
      store& lane_store =
          gpus.size() == 1
              ? *records
              : *lane_records.emplace_back(std::make_unique<store>(records->home()));
      lanes.push_back(evaluators
                          .emplace_back(std::make_unique<bench_evaluator>(lane, lane_store,
                                                                          j.reward_sessions))
                          .get());
    }
    const auto progress = [&](const attempt& a) {
      if (!global.quiet) std::cerr << "blaster: " << step_line(a) << '\n';
    };
    const optimize_result r = run_optimize(o, *records, lanes, progress);
    report_box(r.box);
    // How it ended decides the exit, and with --json the error object bench prints too.
    int code = static_cast<int>(exit_ok);
    std::string failure;
    if (r.ended == "no_gpu") {
      code = static_cast<int>(exit_no_gpu);
      failure = "judging a candidate needs a GPU: " + r.why;
    } else if (r.ended.rfind("proposer_", 0) == 0 && r.ended != "proposer_stopped") {
      code = static_cast<int>(exit_failure);
      failure = fmt::format("{} (its standard error is in {})", r.why,
                            (r.folder / "proposer.log").string());
    }
    if (global.json) {
      nlohmann::json j = to_json(r, o);
      if (!failure.empty()) {
        j["error"] = error_json(code == exit_no_gpu ? "no_gpu" : r.ended, failure)["error"];
      }
      std::cout << j.dump(2) << '\n';
    } else {
      fmt::print("optimize {} ({}, {}): run {}, {} steps in {:.1f} s{}; ended: {}\n", o.task.name,
                 o.task.timed_case, o.task.shape, r.run_id, r.steps.size(), r.elapsed_s,
                 o.resume ? " (resumed)" : "", r.why);
      for (const attempt& a : r.steps) fmt::print("{}\n{}", step_line(a), log_lines(a));
      if (r.best) fmt::print("best: step {}\n", *r.best);
    }
    if (!failure.empty()) std::cerr << "blaster: " << failure << '\n';
    return code;
  };
}

command_fn add_proposer_command(CLI::App& app, const global_options& global) {
  struct flags {
    std::string task;
    std::vector<std::filesystem::path> candidates;
    int sessions = 3;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "proposer",
      "Built-in proposers that speak optimize/PROTOCOL.md on standard input and output; "
      "`blaster optimize --proposer params` starts `blaster proposer params`.");
  cmd->require_subcommand(1);
  CLI::App* params = cmd->add_subcommand(
      "params",
      "Search the params of the task's candidate files by successive halving: each "
      "configuration, pinned to its values, is proposed with one timing session; the faster "
      "half of those that passed (by the speedup over the baseline of the same run) is "
      "proposed again with twice the sessions, until one is left, "
      "which is proposed once more with --sessions. Then it asks to stop.");
  params->footer("Example:\n  blaster optimize --task rmsnorm --proposer params");
  params->add_option("--task", f->task, "task name: a folder under tasks/")->required();
  params->add_option("--candidate", f->candidates,
                     "a candidate file or folder (repeatable; default kernels/<task>/)");
  params->add_option("--sessions", f->sessions, "sessions of the confirming step")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  return [f, &global]() {
    const auto root = resolve_root(global);
    params_search search(arms_of(searched_files(root, f->task, f->candidates)), f->sessions);
    serve_params_proposer(std::cin, std::cout, search);
    return static_cast<int>(exit_ok);
  };
}

command_fn add_memory_command(CLI::App& app, const global_options& global) {
  struct flags {
    std::optional<std::string> task;
    std::optional<std::string> tag;
    int limit = 50;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "memory",
      "List what optimization sessions tried, across runs and tasks: each step's GPU, "
      "hypothesis, tags, outcome and speedup interval, the bound of the kernel it set out to "
      "improve (improved) and its own (bound), the most rewarding first.");
  cmd->footer(
      "A bound is bandwidth-, compute-, latency- or launch-bound from the step's counters, or "
      "from its roofline where it has none (launch-, bandwidth- or compute-bound, else "
      "unknown). An optimize request's memory shows the steps of its own GPU first, those that improved a "
      "kernel of its best's bound before the rest; every entry names its gpu.\n\n"
      "Examples:\n  blaster memory --task rmsnorm\n  blaster memory --tag vectorize --json");
  cmd->add_option("--task", f->task, "only this task's steps");
  cmd->add_option("--tag", f->tag, "only steps the proposer tagged so");
  cmd->add_option("--limit", f->limit, "at most this many steps")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  return [f, &global]() {
    const std::unique_ptr<store> records = open_existing_store(global);
    std::vector<optimization_memory::entry> entries;
    if (records) {
      entries = optimization_memory(*records).recall(
          {.task = f->task, .tag = f->tag, .exclude_run = std::nullopt, .limit = f->limit});
    }
    if (global.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& e : entries) j.push_back(to_json(e));
      std::cout << j.dump(2) << '\n';
    } else if (entries.empty()) {
      fmt::print("no optimization steps recorded{}\n",
                 f->task ? " for task " + *f->task : std::string());
    } else {
      make_renderer(global.format)->render(memory_table(entries), std::cout);
    }
    return static_cast<int>(exit_ok);
  };
}

command_fn add_trajectories_command(CLI::App& app, const global_options& global) {
  struct flags {
    std::vector<std::string> runs;
    std::filesystem::path out;
    std::optional<std::filesystem::path> sign;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "trajectories", "Export optimize sessions as chat-style trajectories (JSONL).");
  cmd->require_subcommand(1);
  CLI::App* exp = cmd->add_subcommand(
      "export",
      "Write optimize runs as trajectories.jsonl (one session per line) inside an evidence "
      "bundle that `blaster verify` checks and recomputes: each step's request, reply, source "
      "and judging run.");
  exp->footer(
      "The fields are those of the trajectory format (op, impl, gpu, arch, dtype, shape, "
      "signature, desc, baseline_ms, best, attempts, elapsed_s, elapsed_hms, num_steps, "
      "messages, trace); step statuses map blaster's reasons to ok, compileerror (compile, plan "
      "or reply errors) and wrongresult (every gate rejection), with the finer reason, the "
      "speedup interval, the reward and the CAS digests beside them. messages are the request "
      "and reply lines exactly as they were written and read (a serve or eval step: the "
      "client's line and the answer), after one system turn; an assistant turn that was no "
      "candidate carries blaster_not_a_candidate (optimize/PROTOCOL.md).\n\n"
      "Example:\n  blaster trajectories export --run latest --out session-12");
  exp->add_option("--run", f->runs, "an optimize run id, or 'latest' (repeatable)")->required();
  exp->add_option("--out", f->out, "the bundle folder to create")->required();
  exp->add_option("--sign", f->sign, "sign SHA256SUMS with this private key (PREFIX.key)");
  return [f, &global]() {
    require_format(global, {"table", "json"}, "trajectories export");
    std::optional<ed25519_key> key;
    if (f->sign) key = read_private_key(*f->sign);
    const std::unique_ptr<store> records = require_store(global);
    std::vector<std::int64_t> runs;
    for (const auto& r : f->runs) runs.push_back(resolve_session(*records, r));
    const bundle_written written =
        export_trajectories(*records, runs, f->out, key ? &*key : nullptr);
    if (global.json) {
      std::cout << nlohmann::json{{"dir", written.dir.string()},
                                  {"sessions", runs.size()},
                                  {"files", written.manifest.size()}}
                       .dump(2)
                << '\n';
    } else {
      fmt::print("wrote {}: {} sessions, {} files; check it with: blaster verify {}\n",
                 written.dir.string(), runs.size(), written.manifest.size(), written.dir.string());
    }
    return static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
