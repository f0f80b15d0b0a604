#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_driver.hpp"
#include "core/nvrtc_compiler.hpp"
#include "core/revision.hpp"
#include "evidence/store.hpp"
#include "profiling/cupti_info.hpp"

namespace blaster::cli {

command_fn add_doctor_command(CLI::App& app, const global_options& global) {
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Report the driver, GPU, compute capability, clocks, memory, NVRTC and CUPTI.");
  cmd->footer(
      "The GPU shown in full is the one CUDA numbers 0 in this process; every GPU it sees is "
      "listed by the number --gpus takes.\n\n"
      "Exit status: 0 whether or not there is a GPU (the report says which); 1 the machine "
      "failed.");
  return [&global]() {
    require_format(global, {"table", "json"}, "doctor");
    nlohmann::json j = {{"blaster_revision", std::string(source_revision())},
                        {"nvrtc", nvrtc_version()},
                        {"cupti", cupti_version()}};
    j["home"] = resolve_home(global.home).string();
    try {
      j["root"] = resolve_root(global).string();
    } catch (const input_error& e) {
      j["root"] = nullptr;
    }
    const std::string unavailable = cuda::driver_unavailable_reason();
    std::optional<cuda::device_properties> p;
    if (unavailable.empty()) {
      p = cuda::query_device(0);
      j["driver_version"] =
          fmt::format("{}.{}", p->driver_version / 1000, p->driver_version % 1000 / 10);
      j["gpu"] = {{"name", p->name},
                  {"uuid", p->uuid},
                  {"compute_capability", fmt::format("{}.{}", p->compute_major, p->compute_minor)},
                  {"arch", p->arch()},
                  {"sm_count", p->sm_count},
                  {"sm_clock_mhz", p->sm_clock_khz / 1000},
                  {"memory_clock_mhz", p->memory_clock_khz / 1000},
                  {"memory_bus_width_bits", p->memory_bus_width_bits},
                  {"l2_bytes", p->l2_bytes},
                  {"total_memory_bytes", p->total_memory_bytes}};
      int count = 0;
      cuda::check(cuda::driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
      j["gpus"] = nlohmann::json::array();
      for (int i = 0; i < count; ++i) {
        const cuda::device_properties d = cuda::query_device(i);
        j["gpus"].push_back({{"gpu", i}, {"name", d.name}, {"uuid", d.uuid}});
      }
    } else {
      j["gpu"] = nullptr;
      j["gpu_unavailable"] = unavailable;
    }
    if (global.json) {
      std::cout << j.dump(2) << '\n';
    } else {
      std::cout << fmt::format("NVRTC          {}\nCUPTI          {}\n",
                               j["nvrtc"].get<std::string>(), j["cupti"].get<std::string>());
      std::cout << fmt::format("home           {}\nroot           {}\n",
                               j["home"].get<std::string>(),
                               j["root"].is_null() ? "(none found)" : j["root"].get<std::string>());
      if (p) {
        std::cout << fmt::format(
            "driver         {}\nGPU            {} ({})\ncompute        {}.{} ({}), {} SMs\n"
            "clocks         SM {} MHz, memory {} MHz, {}-bit bus\nmemory         {:.1f} GiB, L2 "
            "{:.1f} MiB\n",
            j["driver_version"].get<std::string>(), p->name, p->uuid, p->compute_major,
            p->compute_minor, p->arch(), p->sm_count, p->sm_clock_khz / 1000,
            p->memory_clock_khz / 1000, p->memory_bus_width_bits,
            static_cast<double>(p->total_memory_bytes) / (1 << 30),
            static_cast<double>(p->l2_bytes) / (1 << 20));
        for (const auto& g : j["gpus"]) {
          std::cout << fmt::format("--gpus {:<7} {} ({})\n", g["gpu"].get<int>(),
                                   g["name"].get<std::string>(), g["uuid"].get<std::string>());
        }
      } else {
        std::cout << "GPU            none: " << unavailable << '\n';
      }
    }
    // A machine without a GPU is a normal state, and saying so is what doctor is for.
    return static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
