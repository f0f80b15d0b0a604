#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/cuda_context.hpp"

namespace blaster {

// The GPUs a run uses (--gpus all|0,1,...), numbered as CUDA numbers them in this process. None
// given: the process's device 0, as it always was.
struct gpu_choice {
  bool all = false;
  std::vector<int> ordinals;

  [[nodiscard]] bool given() const { return all || !ordinals.empty(); }
};

// "all", or ordinals separated by commas; anything else is an input error that names the flag.
gpu_choice parse_gpu_choice(std::string_view text);
std::string to_string(const gpu_choice& choice);  // as --gpus spells it

// One GPU of a run: one supervised worker at a time runs there, shown only that GPU.
struct gpu_lane {
  int ordinal = 0;
  // The worker's CUDA_VISIBLE_DEVICES, and the name of the GPU's lock (device_lock): this
  // process's own entry for the GPU where it has CUDA_VISIBLE_DEVICES, else the ordinal. Empty:
  // the worker sees what this process sees (no --gpus).
  std::string visible;
  cuda::device_properties device;  // from the listing, before the GPU is probed
};

// The lanes of `choice` among `devices`, this process's GPUs in CUDA's order, given the entries of
// its CUDA_VISIBLE_DEVICES (visible_devices(); none: unset), entry k being GPU k. Refuses, naming
// the GPUs that are there: an ordinal with no GPU, a GPU named twice, and GPUs of two models (a
// run's ratios compare one model's numbers).
std::vector<gpu_lane> resolve_gpu_choice(const gpu_choice& choice,
                                         const std::vector<cuda::device_properties>& devices,
                                         const std::vector<std::string>& visible);

}  // namespace blaster
