#include "benchmarking/warm_bench.hpp"

#include <unistd.h>

#include <fmt/format.h>

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
