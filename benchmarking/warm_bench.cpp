#include "benchmarking/warm_bench.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "benchmarking/worker_launcher.hpp"
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

persistent_worker* warm_bench::kept_worker(const std::filesystem::path& executable) {
  if (!keep_worker) return nullptr;
  if (!worker)
    worker.emplace(kept_worker_argv(executable), worker_limits{}, kept_worker_evaluations);
  return &*worker;
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
