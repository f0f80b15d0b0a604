#include "benchmarking/runner/gpu_lanes.hpp"

#include <random>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/cuda_driver.hpp"
#include "core/parallel_for.hpp"

namespace blaster {
namespace {

// The lock of a GPU (gpu_lane::visible; empty: this process's device 0): another blaster process
// that wants it waits.
std::string lock_name(const std::string& visible) {
  return visible.empty() ? visible_device() : visible;
}
void say_waiting(const std::string& message) { spdlog::info("{}", message); }

// Why a worker's `answer` to `what` ("the GPU probe") carries nothing: no GPU there, or its
// failure in words; empty where it answered.
std::string unanswered(const worker_answer& answer, const std::string& what) {
  if (!answer.result) return what + " failed: " + answer.why;
  if (answer.result->unavailable) return *answer.result->unavailable;
  if (answer.result->failure) return what + " failed: " + answer.result->failure->message;
  return {};
}

// Asks a worker what GPU there is and how fast it copies. The parent itself never touches the
// driver: a process that has initialized CUDA passes a broken state to what it forks.
probed_device probe(const worker_launcher& launcher) {
  // The ceilings it measures are its own.
  const device_lock gpu(lock_name(launcher.visible), say_waiting);
  worker_request request;
  request.phase = worker_phase::probe;
  const worker_answer answer = launcher.run(request, first_deadline);
  probed_device found{.probe = std::nullopt, .unavailable = unanswered(answer, "the GPU probe")};
  if (!found.unavailable.empty()) return found;
  if (!answer.result->probe) {
    found.unavailable = "the GPU probe failed: it answered without a probe";
  } else {
    found.probe = answer.result->probe;
  }
  return found;
}

// Every GPU a worker of `lister` sees, in CUDA's order, or why it sees none.
struct gpu_listing {
  std::vector<cuda::device_properties> devices;
  std::string unavailable;
};

gpu_listing list_gpus(const worker_launcher& lister) {
  worker_request request;
  request.phase = worker_phase::devices;
  const worker_answer answer = lister.run(request, first_deadline);
  gpu_listing out{.devices = {}, .unavailable = unanswered(answer, "listing the GPUs")};
  if (!out.unavailable.empty()) return out;
  if (!answer.result->devices) {
    out.unavailable = "listing the GPUs failed: no list came back";
  } else {
    out.devices = *answer.result->devices;
  }
  return out;
}

worker_launcher lister(const std::filesystem::path& executable, const std::filesystem::path& dir) {
  return {.executable = executable, .dir = dir, .visible = {}, .lane = 0, .kept = nullptr};
}

}  // namespace

std::vector<gpu_lane> choose_gpus(const gpu_choice& choice,
                                  const std::filesystem::path& executable) {
  std::random_device entropy;
  const scratch_folder scratch((static_cast<std::uint64_t>(entropy()) << 32U) | entropy());
  const gpu_listing listed = list_gpus(lister(executable, scratch.path()));
  if (!listed.unavailable.empty()) throw cuda::gpu_unavailable(listed.unavailable);
  return resolve_gpu_choice(choice, listed.devices, visible_devices());
}

std::vector<worker_launcher> lane_launchers(const gpu_choice& choice, bool compile_only,
                                            const std::filesystem::path& executable,
                                            warm_bench& kept) {
  if (kept.lanes.empty()) {
    if (!choice.given() || compile_only) {
      kept.lanes.emplace_back();
    } else if (const gpu_listing listed = list_gpus(lister(executable, kept.scratch->path()));
               !listed.unavailable.empty()) {
      kept.lanes.emplace_back().probed.emplace().unavailable = listed.unavailable;
    } else {
      for (auto& gpu : resolve_gpu_choice(choice, listed.devices, visible_devices())) {
        kept.lanes.emplace_back().gpu = std::move(gpu);
      }
    }
  }
  std::vector<worker_launcher> launchers;
  for (std::size_t lane = 0; lane < kept.lanes.size(); ++lane) {
    launchers.push_back({.executable = executable,
                         .dir = kept.scratch->path(),
                         .visible = kept.lanes[lane].gpu.visible,
                         .lane = lane,
                         .kept = kept.kept_worker(lane, executable)});
  }
  return launchers;
}

void probe_lanes(const std::vector<worker_launcher>& launchers, warm_bench& kept) {
  on_every_lane(launchers.size(),
                [&](std::size_t lane) { kept.lanes[lane].probed = probe(launchers[lane]); });
}

void apply_lanes(const warm_bench& kept, bench_report& report) {
  kept.lanes.front().probed->apply_to(report);
  if (kept.lanes.size() < 2) return;
  for (const auto& lane : kept.lanes) {
    if (!lane.probed->unavailable.empty()) {
      report.gpu = false;
      report.gpu_unavailable =
          fmt::format("GPU {}: {}", lane.gpu.ordinal, lane.probed->unavailable);
      return;
    }
    report.gpus.push_back(lane.probed->probe->device);
  }
}

void take_turns(const std::vector<worker_launcher>& launchers, std::deque<device_lock>& turns) {
  std::set<std::string> names;
  for (const auto& l : launchers) names.insert(lock_name(l.visible));
  for (const auto& name : names) turns.emplace_back(name, say_waiting);
}

std::string lane_uuid(const warm_bench& kept, std::size_t lane) {
  if (kept.lanes.size() < 2) return {};
  const auto& probed = kept.lanes.at(lane).probed;
  return probed && probed->probe ? probed->probe->device.uuid : kept.lanes.at(lane).gpu.device.uuid;
}

}  // namespace blaster
