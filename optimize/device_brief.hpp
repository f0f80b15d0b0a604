#pragma once

// The device as a request shows it to the proposer: the GPU's facts, its short model, and the
// ceilings blaster measured on it, so that the first request already says what the card can do
// and how far the baseline is from it.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"

namespace blaster {

// The GPU's model without its vendor and memory words: "NVIDIA H100 80GB HBM3" is "H100",
// "NVIDIA A100-SXM4-80GB" is "A100-SXM4", "NVIDIA H100 PCIe" stays "H100 PCIe" (another card).
// The memory keys its rows by it, so that two cards' results never mix unlabelled.
std::string gpu_model(std::string_view name);

// The run's device (name, UUID, arch, SMs, clocks, L2, shared memory, memory, driver), with
// `model` and `ceilings`: the DRAM copy, read and write rates, the L2's and the datasheet peak
// [GB/s], the matrix rate [TFLOP/s] and the empty kernel's time per timing mode [us]. Null
// where the run found no GPU.
nlohmann::json device_brief(const bench_report& report);

}  // namespace blaster
