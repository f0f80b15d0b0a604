#include "benchmarking/runner/warm_bench.hpp"

#include <unistd.h>

#include <tuple>

#include <fmt/format.h>

#include "benchmarking/worker/worker_launcher.hpp"
#include "core/error.hpp"

namespace blaster {

scratch_folder::scratch_folder(std::uint64_t seed)
    : path_(std::filesystem::temp_directory_path() /
            fmt::format("blaster-{}-{:016x}", ::getpid(), seed)) {
  std::filesystem::create_directories(path_);
}

scratch_folder::~scratch_folder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void warm_bench::join(const std::string& what) {
  if (seed && series != what)
    BLASTER_THROW("a warm bench series of {} cannot run {}", series, what);
  series = what;
}

const warm_bench::gated_variant* warm_bench::gated_as(const std::string& label,
                                                      const std::string& source_sha256) const {
  const auto found = gated.find(label);
  return found != gated.end() && found->second.source_sha256 == source_sha256 ? &found->second
                                                                              : nullptr;
}

namespace {

void remove_outputs(const warm_bench::gated_variant& g) {
  std::error_code ignored;
  for (const auto& [name, file] : g.outputs) std::filesystem::remove(file.first, ignored);
}

}  // namespace

worker_request warm_bench::gated_variant::timing_request(const std::string& case_name,
                                                         const timing_options& timing) const {
  worker_request out = request;
  out.timing = timing;
  std::tie(out.outputs_file, out.outputs_base) = outputs.at(case_name);
  out.other_draws_sha256 = other_draws_sha256.at(case_name);
  return out;
}

void warm_bench::keep(const std::string& label, gated_variant passed) {
  if (const auto found = gated.find(label); found != gated.end()) remove_outputs(found->second);
  gated.insert_or_assign(label, std::move(passed));
}

void warm_bench::keep_only(const std::set<std::string>& labels) {
  std::erase_if(gated, [&](const auto& entry) {
    if (labels.contains(entry.first)) return false;
    remove_outputs(entry.second);
    return true;
  });
}

persistent_worker* warm_bench::kept_worker(std::size_t lane,
                                           const std::filesystem::path& executable) {
  if (!keep_worker) return nullptr;
  auto& worker = lanes.at(lane).worker;
  if (!worker) {
    worker.emplace(kept_worker_argv(executable), worker_limits_for(lanes.at(lane).gpu.visible),
                   kept_worker_evaluations);
  }
  return &*worker;
}

int warm_bench::workers_started() const {
  int started = 0;
  for (const auto& l : lanes) started += l.worker ? l.worker->started() : 0;
  return started;
}

void probed_device::apply_to(bench_report& report) const {
  if (probe) {
    report.device = probe->device;
    report.memory = probe->memory;
    report.matrix = probe->matrix;
    report.floors = probe->floors;
  }
  report.gpu_unavailable = unavailable;
  report.gpu = unavailable.empty();
}

}  // namespace blaster
