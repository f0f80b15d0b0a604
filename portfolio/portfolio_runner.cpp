#include "portfolio/portfolio_runner.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/report/result_printer.hpp"
#include "benchmarking/tuned/tuned_lookup.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parallel_for.hpp"
#include "core/sha256.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

// What makes two portfolios the same work: the suite's bytes, the sessions per item, whether they
// time anything, and whether every configuration competes.
json progress_identity(const suite& s, int sessions, const portfolio_options& options) {
  json identity = {{"suite", s.name}, {"suite_sha256", s.sha256}, {"sessions", sessions}};
  if (options.compile_only) identity["compile_only"] = true;
  if (options.all_params) identity["all_params"] = true;
  return identity;
}

// The digest of a list of files under root, each named by its path so that a renamed or
// removed file changes it too.
std::string files_sha256(const std::filesystem::path& root, const std::set<std::string>& files) {
  sha256_hasher hasher;
  for (const auto& file : files) {
    // A path holds no NUL and a digest is 64 digits: the concatenation reads back one way.
    hasher.update(file);
    hasher.update(std::string_view("\0", 1));
    hasher.update(sha256_file_hex(root / file));
  }
  return hasher.finish_hex();
}

std::string minutes(double seconds) {
  return seconds < 90 ? fmt::format("{:.0f} s", seconds) : fmt::format("{:.0f} min", seconds / 60);
}

// Whether bench on `device` may read the tuned table `file`: one named for another GPU it never
// reads; one whose name does not say, or does not parse, it may (or fails on).
bool read_on(const std::filesystem::path& file, const std::optional<std::string>& device) {
  if (!device || file.extension() != ".json") return true;
  try {
    for (const auto& [key, value] : parse_tuned_file_name(file.filename().string())) {
      if (key == "device_name") return value == *device;
    }
  } catch (const input_error&) {
  }
  return true;
}

bool is_progress(const json& progress) {
  return progress.is_object() && progress.contains("identity") &&
         progress["identity"].is_object() && progress.contains("done") &&
         progress["done"].is_object();
}

// Adds the done items of `theirs`, a portfolio's progress from `source`, to the progress file
// `name` of records' home: each whose run is here, the same run that recorded it.
void merge_progress(store& records, const std::string& name, const json& theirs,
                    const std::filesystem::path& source, progress_merge& out) {
  const std::filesystem::path path = records.home() / "portfolio" / name;
  json ours = {{"identity", theirs["identity"]}, {"done", json::object()}};
  if (const auto bytes = read_file_if_exists(path)) {
    ours = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  }
  if (!ours.is_object() || !ours.contains("done") || !ours["done"].is_object() ||
      ours.value("identity", json()) != theirs["identity"]) {
    out.conflicts.push_back(fmt::format(
        "portfolio/{}: this home's is of another suite version or protocol, or damaged", name));
    return;
  }
  for (const auto& [key, done] : theirs["done"].items()) {
    const auto run_id = done.value("run_id", std::int64_t{0});
    if (ours["done"].contains(key)) {
      // The same run's record is the same: its id and its report (its sources' digest may
      // be of either kind, task_sources).
      const json& here = ours["done"][key];
      if (here.value("run_id", std::int64_t{0}) != run_id ||
          here.value("report_sha256", std::string()) !=
              done.value("report_sha256", std::string())) {
        out.conflicts.push_back(fmt::format("{}: recorded here by run {}, in {} by another run {}",
                                            key, ours["done"][key].value("run_id", 0),
                                            source.string(), run_id));
      }
      continue;
    }
    // A run of that id that reported otherwise is another run, which the merge kept here.
    statement run = records.db().prepare("SELECT 1 FROM runs WHERE id = ?1 AND report_sha256 = ?2");
    run.bind(1, run_id);
    run.bind(2, done.value("report_sha256", std::string()));
    if (!run.step()) {
      out.conflicts.push_back(fmt::format("{}: its run {} did not come over", key, run_id));
      continue;
    }
    ours["done"][key] = done;
    ++out.items_added;
  }
  std::filesystem::create_directories(path.parent_path());
  write_file_atomically(path, ours.dump(1) + "\n");
}

}  // namespace

task_sources task_sources_sha256(const std::filesystem::path& root, const std::string& task,
                                 const std::optional<std::string>& device, bool tables,
                                 const compile_limits& limits) {
  std::set<std::string> files;  // relative to root, so sorted in a stable order
  auto add = [&](const std::filesystem::path& file) {
    files.insert(file.lexically_relative(root).generic_string());
  };
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "tasks" / task)) {
    if (entry.is_regular_file()) add(entry.path());
  }
  const std::filesystem::path common = common_headers_folder(root);
  bool every_header = false;  // a candidate whose includes are not known reaches them all
  std::set<std::string> included;
  for (const auto& file : discover_candidates(root, task, {}, limits).files) {
    add(file);
    const candidate_file read = read_candidate(file, {}, common);
    // Without a plan its includes were not resolved (unread, refused, a plan error): any header
    // may be one of them, or one it names may appear.
    if (!read.plan) every_header = true;
    for (const auto& h : read.headers) included.insert(h.name);  // "common/NAME.cuh"
  }
  if (const auto tuned = tuned_folder(root, task); tables && std::filesystem::is_directory(tuned)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(tuned)) {
      if (entry.is_regular_file() && read_on(entry.path(), device)) add(entry.path());
    }
  }
  std::set<std::string> all_common;
  if (std::filesystem::is_directory(common)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(common)) {
      if (entry.is_regular_file())
        all_common.insert(entry.path().lexically_relative(root).generic_string());
    }
  }
  std::set<std::string> with_all = files;
  with_all.insert(all_common.begin(), all_common.end());
  const std::string every = files_sha256(root, with_all);
  if (every_header) return {.exact = every, .every_common_header = every};
  for (const auto& name : included) {
    files.insert((common.parent_path() / name).lexically_relative(root).generic_string());
  }
  return {.exact = files_sha256(root, files), .every_common_header = every};
}

std::vector<portfolio_item> portfolio_items(const suite& s, int shard, int shards) {
  std::vector<portfolio_item> items;
  for (std::size_t k = 0; k < s.entries.size(); ++k) {
    if (static_cast<int>(k % static_cast<std::size_t>(shards)) != shard - 1) continue;
    const suite_entry& e = s.entries[k];
    for (const auto& c : e.cases) items.push_back({e.id, e.task, c.name, c.mode});
  }
  return items;
}

std::vector<portfolio_item> items_not_run(const suite& s, const portfolio_options& options,
                                          const std::vector<portfolio_outcome>& outcomes) {
  std::set<std::string> done;
  for (const auto& o : outcomes) done.insert(o.item.key());
  std::vector<portfolio_item> left;
  for (auto& item : portfolio_items(s, options.shard, options.shards)) {
    if (!done.contains(item.key())) left.push_back(std::move(item));
  }
  return left;
}

std::int64_t shard_first_run_id(int shard) { return std::int64_t{shard} * 1'000'000; }

std::string progress_file_name(const std::string& suite_name, bool compile_only) {
  return suite_name + (compile_only ? ".compile-only" : "") + ".progress.json";
}

std::filesystem::path portfolio_progress_file(const store& records, const suite& s,
                                              bool compile_only) {
  return records.home() / "portfolio" / progress_file_name(s.name, compile_only);
}

progress_merge merge_portfolio_progress(store& records, const std::filesystem::path& source) {
  progress_merge out;
  const std::filesystem::path folder = source / "portfolio";
  if (!std::filesystem::is_directory(folder)) return out;
  for (const auto& file : std::filesystem::directory_iterator(folder)) {
    const std::string name = file.path().filename().string();
    if (!name.ends_with(".progress.json")) continue;
    const json theirs = json::parse(read_file(file.path()), nullptr, /*allow_exceptions=*/false);
    if (!is_progress(theirs)) {
      out.conflicts.push_back(fmt::format("{}: not a portfolio's progress", file.path().string()));
      continue;
    }
    merge_progress(records, name, theirs, source, out);
  }
  return out;
}

json portfolio_bundle_progress(const store& records, const suite& s,
                               const std::vector<portfolio_outcome>& outcomes) {
  const auto bytes = read_file_if_exists(portfolio_progress_file(records, s));
  if (!bytes) return json();
  const json progress = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!is_progress(progress) || progress["identity"].value("suite", json()) != json(s.name) ||
      progress["identity"].value("suite_sha256", json()) != json(s.sha256)) {
    return json();
  }
  json out = {{"identity", progress["identity"]}, {"done", json::object()}};
  for (const auto& o : outcomes) {
    const json& done = progress["done"];
    if (!done.contains(o.item.key()) || !done[o.item.key()].is_object() ||
        done[o.item.key()].value("run_id", std::int64_t{0}) != o.run_id) {
      return json();
    }
    out["done"][o.item.key()] = done[o.item.key()];
  }
  return out;
}

json read_bundle_progress(const std::filesystem::path& bundle) {
  const auto results = read_file_if_exists(bundle / "results.json");
  const json summary =
      results ? json::parse(*results, nullptr, /*allow_exceptions=*/false) : json();
  if (!summary.is_object() || !summary.contains("rows") || !summary["rows"].is_array()) {
    return json();  // a run's bundle, or a trajectory's: no portfolio to continue
  }
  const std::filesystem::path file = bundle / bundle_progress_name;
  const auto bytes = read_file_if_exists(file);
  if (!bytes) {
    BLASTER_INPUT_ERROR(
        "{}: a portfolio's bundle without {} (written before bundles carried their portfolio's "
        "progress), so its cases could not continue the portfolio here and it is not merged; "
        "to show or compare its runs, merge the run bundles under its runs/ that verify alone",
        bundle.string(), bundle_progress_name);
  }
  const json progress = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  // Its suite's name becomes a file name in the home.
  const std::string name = is_progress(progress) && progress["identity"].contains("suite") &&
                                   progress["identity"]["suite"].is_string()
                               ? progress["identity"]["suite"].get<std::string>()
                               : std::string();
  if (name.empty() || name == "." || name == ".." ||
      name.find_first_of(std::string_view("/\0", 2)) != std::string::npos) {
    BLASTER_INPUT_ERROR("{}: not a portfolio's progress (its identity names no suite)",
                        file.string());
  }
  return progress;
}

progress_merge merge_bundle_progress(store& records, const std::filesystem::path& bundle,
                                     const json& progress) {
  progress_merge out;
  if (progress.is_null()) return out;
  const json& identity = progress["identity"];
  merge_progress(records,
                 progress_file_name(identity["suite"].get<std::string>(),
                                    identity.value("compile_only", false)),
                 progress, bundle, out);
  return out;
}

std::vector<portfolio_outcome> run_portfolio(const suite& s, const portfolio_options& options,
                                             store& records, const portfolio_bench& bench) {
  const int sessions = options.sessions > 0 ? options.sessions : s.protocol.sessions;
  const std::filesystem::path progress_path =
      portfolio_progress_file(records, s, options.compile_only);
  const json identity = progress_identity(s, sessions, options);
  json progress = {{"identity", identity}, {"done", json::object()}};
  if (!options.fresh) {
    if (const auto bytes = read_file_if_exists(progress_path)) {
      const json earlier = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
      if (earlier.is_object() && earlier.value("identity", json()) == identity &&
          earlier.contains("done") && earlier["done"].is_object()) {
        progress = earlier;
      } else {
        spdlog::info("{} is of another suite or protocol: starting over", progress_path.string());
      }
    }
  }
  std::filesystem::create_directories(progress_path.parent_path());

  const std::vector<portfolio_item> items = portfolio_items(s, options.shard, options.shards);
  // A task's sources as they are now; with every configuration timed, no table counts.
  auto sources_now = [&](const std::string& task, const std::optional<std::string>& device) {
    return task_sources_sha256(options.root, task, device, /*tables=*/!options.all_params,
                               options.compile);
  };
  // By task and device: an item is held to the tables of the GPU it ran on (its "device"), one
  // recorded without a device, or not yet run, to the tables of every GPU. Once the GPUs' threads
  // start, used under `recording` only. Taken once: a file that changes later makes the items
  // recorded after it stale, never the other way round.
  std::map<std::pair<std::string, std::optional<std::string>>, task_sources> sources;
  auto sources_of = [&](const std::string& task,
                        const std::optional<std::string>& device) -> const task_sources& {
    auto it = sources.find({task, device});
    if (it == sources.end())
      it = sources.emplace(std::pair(task, device), sources_now(task, device)).first;
    return it->second;
  };
  auto device_of = [](const json& done) -> std::optional<std::string> {
    if (!done.contains("device") || !done["device"].is_string()) return std::nullopt;
    return done["device"].get<std::string>();
  };
  // An item recorded with every shared header in its digest holds as well, and from now on
  // carries the exact one: written at once, with the stale items still in it.
  bool upgraded = false;
  for (const auto& item : items) {
    if (!progress["done"].contains(item.key())) continue;
    json& done = progress["done"][item.key()];
    const task_sources& now = sources_of(item.task, device_of(done));
    if (done.value("sources_sha256", std::string()) == now.every_common_header) {
      done["sources_sha256"] = now.exact;
      upgraded = true;
    }
  }
  if (upgraded) write_file_atomically(progress_path, progress.dump(1) + "\n");
  // An item recorded for other sources is stale: its entry is dropped, so that it is redone.
  for (const auto& item : items) {
    if (!progress["done"].contains(item.key())) continue;
    const json& done = progress["done"][item.key()];
    if (done.value("sources_sha256", std::string()) == sources_of(item.task, device_of(done)).exact)
      continue;
    spdlog::info("{}: its task or candidate files changed since run {}: {}", item.key(),
                 done.value("run_id", std::int64_t{0}),
                 options.recorded_only ? "not run yet" : "redone");
    progress["done"].erase(item.key());
  }

  // A case whose bench finished while its progress was not yet written (the process stopped in
  // between, as scancel stops it) is taken from its run, not redone: the newest run with the
  // command this portfolio began it with, after the run it noted then, for the same sources.
  bool adopted = false;
  for (const auto& item : items) {
    if (!progress.contains("pending") || !progress["pending"].contains(item.key())) continue;
    const json pending = progress["pending"][item.key()];
    progress["pending"].erase(item.key());
    if (progress["done"].contains(item.key()) || pending.value("sources_sha256", std::string()) !=
                                                     sources_of(item.task, std::nullopt).exact) {
      continue;
    }
    statement run = records.db().prepare(
        "SELECT id, report_sha256 FROM runs WHERE id > ?1 AND command = ?2 AND status IN "
        "('completed', 'compiled') AND report_sha256 <> '' ORDER BY id DESC LIMIT 1");
    run.bind(1, pending.value("after_run", std::int64_t{0}));
    run.bind(2, pending.value("command", std::string()));
    if (!run.step()) continue;
    spdlog::info("{}: run {} finished before the portfolio stopped; it is the case's record",
                 item.key(), run.column_int64(0));
    progress["done"][item.key()] = {{"run_id", run.column_int64(0)},
                                    {"report_sha256", run.column_text(1)},
                                    {"sources_sha256", pending["sources_sha256"]}};
    adopted = true;
  }
  if (adopted) write_file_atomically(progress_path, progress.dump(1) + "\n");

  // Recorded by an earlier portfolio: its report comes back from the store, not the GPU.
  std::vector<std::optional<portfolio_outcome>> found(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const portfolio_item& item = items[i];
    if (!progress["done"].contains(item.key())) continue;
    const json& done = progress["done"][item.key()];
    const auto digest = done.at("report_sha256").get<std::string>();
    if (const std::optional<std::string> report = records.cas().get(digest, /*verify=*/true)) {
      spdlog::info("[{}/{}] {} {} case {}: recorded as run {}, not redone", i + 1, items.size(),
                   item.id, item.task, item.case_name, done.at("run_id").get<std::int64_t>());
      found[i] = {item, done.at("run_id").get<std::int64_t>(),
                  bench_report_from_json(json::parse(*report)), /*resumed=*/true};
      continue;
    }
    spdlog::warn("the store lacks run {}'s report {}: {} is redone",
                 done.at("run_id").get<std::int64_t>(), digest, item.key());
    progress["done"].erase(item.key());
  }
  // What is left, by entry: an entry's cases are one series on one GPU.
  std::vector<std::vector<std::size_t>> entries;
  for (std::size_t i = 0; i < items.size() && !options.recorded_only; ++i) {
    if (found[i]) continue;
    if (entries.empty() || items[entries.back().front()].id != items[i].id) entries.emplace_back();
    entries.back().push_back(i);
  }
  std::size_t left = 0;
  for (const auto& entry : entries) left += entry.size();

  const auto started = std::chrono::steady_clock::now();
  std::mutex recording;  // progress, found and the counts, which every GPU's entries update
  std::size_t benched = 0;
  const std::vector<gpu_lane> gpus =
      options.choose_gpus && !entries.empty() ? options.choose_gpus() : options.gpus;
  const std::size_t lanes = std::max<std::size_t>(gpus.size(), 1);
  auto run_entry = [&](const std::vector<std::size_t>& entry, std::size_t lane, store& db) {
    warm_bench series(/*keep_worker=*/false);
    for (const std::size_t i : entry) series.cases.push_back(items[i].case_name);
    for (const std::size_t i : entry) {
      const portfolio_item& item = items[i];
      {
        const std::lock_guard lock(recording);
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        spdlog::info("[{}/{}]{} {} {} case {}{}", i + 1, items.size(),
                     gpus.empty() ? std::string() : fmt::format(" GPU {}", gpus[lane].ordinal),
                     item.id, item.task, item.case_name,
                     // The wall time per case so far, over every GPU.
                     benched > 0 ? fmt::format(" · about {} left",
                                               minutes(elapsed / static_cast<double>(benched) *
                                                       static_cast<double>(left)))
                                 : std::string());
      }
      bench_options b;
      b.root = options.root;
      b.task = item.task;
      b.timed_case = item.case_name;
      b.arch = options.arch;
      b.compile = options.compile;
      b.sanitize = options.sanitize;
      b.sessions = sessions;
      b.cooldown_s = s.protocol.cooldown_s;
      b.confirm_best = s.protocol.confirm_best;
      b.timing.max_noise = s.protocol.max_noise;
      b.profile = s.protocol.profile;
      b.compile_only = options.compile_only;
      b.use_tuned = !options.all_params;
      if (!gpus.empty()) b.gpus.ordinals = {gpus[lane].ordinal};
      if (item.mode) {
        b.timing.mode = *parse_timing_mode(*item.mode);
        b.mode_given = true;
      }
      b.command = fmt::format("{} · {} case {}", options.command, item.task, item.case_name);
      {
        // Noted before the bench, so that a stop after its run is recorded and before the
        // progress is written finds that run on resume (above) instead of redoing the case.
        const std::lock_guard lock(recording);
        progress["pending"][item.key()] = {
            {"command", b.command},
            {"after_run", db.last_run_id()},
            {"sources_sha256", sources_of(item.task, std::nullopt).exact}};
        write_file_atomically(progress_path, progress.dump(1) + "\n");
      }
      const bench_report report = bench(b, db, series);
      if (!report.gpu && !options.compile_only) {
        throw cuda::gpu_unavailable(report.gpu_unavailable);
      }
      // The same bytes run_bench stored; put again so that a resume finds them whatever ran.
      const std::string report_sha256 = db.cas().put(stored_report_bytes(report));
      const std::lock_guard lock(recording);
      // Held to the tables of the GPU it ran on, unless a file changed while it ran: then to the
      // digest taken before it, which no longer holds, so that a resume redoes it.
      const std::string before = progress["pending"][item.key()]["sources_sha256"];
      progress["pending"].erase(item.key());
      json done = {
          {"run_id", report.run_id}, {"report_sha256", report_sha256}, {"sources_sha256", before}};
      if (sources_now(item.task, std::nullopt).exact == before) {
        const std::string device = report.device ? device_name_key(report.device->name) : "none";
        done["device"] = device;
        done["sources_sha256"] = sources_now(item.task, device).exact;
      }
      progress["done"][item.key()] = std::move(done);
      write_file_atomically(progress_path, progress.dump(1) + "\n");
      found[i] = {item, report.run_id, report, /*resumed=*/false};
      ++benched;
      --left;
    }
  };
  if (lanes == 1) {
    for (const auto& entry : entries) run_entry(entry, 0, records);
  } else {
    // The tasks with the most cases left first, in the suite's order otherwise: a long task
    // started last would leave the other GPUs idle while it runs.
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.size() > b.size(); });
    // Each GPU's connection numbers its runs as this one does, in the same home.
    std::deque<store> connections;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      connections.emplace_back(records.home()).number_runs_from(records.first_run_id());
    }
    spread_over_lanes(entries.size(), lanes, [&](std::size_t k, std::size_t lane) {
      run_entry(entries[k], lane, connections[lane]);
    });
  }
  std::vector<portfolio_outcome> outcomes;
  for (auto& outcome : found) {
    if (outcome) outcomes.push_back(std::move(*outcome));  // none: left by recorded_only
  }
  return outcomes;
}

}  // namespace blaster
