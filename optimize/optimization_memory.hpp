#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimize/attempt.hpp"

namespace blaster {

class store;

// The optimization memory: every step of every optimize run and served evaluation, in the
// store's optimize_steps table, and what later sessions ask of it.
class optimization_memory {
 public:
  explicit optimization_memory(store& records) : records_(records) {}

  // One step of run `run_id`; its source and reply digests must name CAS objects already there.
  void record(std::int64_t run_id, const std::string& task, const std::string& case_name,
              const attempt& a);

  // The answer written back for step `step` of run `run_id` (serve, eval), already in the CAS.
  void record_answer(std::int64_t run_id, int step, const std::string& answer_sha256);

  // The steps of one run, in order.
  std::vector<attempt> steps_of(std::int64_t run_id) const;

  struct entry {
    std::int64_t run_id = 0;
    std::string task;
    std::string case_name;
    std::string started_at;  // the run's
    attempt step;
  };
  struct query {
    std::optional<std::string> task;
    std::optional<std::string> tag;
    std::optional<std::int64_t> exclude_run;
    int limit = 50;
  };
  // Matching steps, the most rewarding first, then the newest.
  std::vector<entry> recall(const query& q) const;

  // The store's folder, whose paths no request may carry.
  [[nodiscard]] const std::filesystem::path& home() const;

 private:
  store& records_;
};

// A step from its optimize_steps row as a run's records hold it (run_catalog::records_of: column
// name to value), as `blaster verify` reads it from a bundle's run.json. A value of the wrong
// type reads as absent.
attempt attempt_from_row(const nlohmann::json& row);

// An entry as a request carries it, and as `blaster memory --json` prints it.
nlohmann::json to_json(const optimization_memory::entry& e);

// What a request's memory is chosen for: the task, the tags of the last reply, the session's
// own run (left out: its steps are feedback), the short model of its GPU and the bound of the
// kernel its next step sets out to improve (empty where not known).
struct memory_context {
  std::string task;
  std::vector<std::string> tags;
  std::int64_t this_run = 0;
  std::string gpu;
  std::string bound;
};

// What a session's request shows of the memory: the task's most rewarding steps and its latest
// rejections from other runs, then other tasks' steps that share a tag with the context's. In
// each, the steps on the session's GPU that improved a kernel of the same bound come first, then
// the others on that GPU, then those of other cards, each entry naming its `gpu`.
nlohmann::json memory_for_request(const optimization_memory& memory,
                                  const memory_context& context, int limit = 20);

}  // namespace blaster
