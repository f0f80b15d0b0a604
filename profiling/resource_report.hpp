#pragma once

#include <cuda.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace blaster {

// What ptxas says one kernel uses; -1 where the log did not say.
struct kernel_resources {
  std::string lowered_name;
  int registers = -1;
  int barriers = -1;
  int stack_bytes = -1;
  int spill_store_bytes = -1;
  int spill_load_bytes = -1;
  int shared_bytes = 0;  // static shared memory; absent from the log when zero
};

nlohmann::json to_json(const kernel_resources& k);
kernel_resources kernel_resources_from_json(const nlohmann::json& j);

// One kernel parameter as PTX declares it.
struct ptx_parameter {
  std::size_t bytes = 0;
  char kind = 'b';  // 'f' floating point, 'u' or 's' integer, 'b' untyped bits or an aggregate
};

// Parses the log NVRTC returns with --ptxas-options=--verbose, one entry per kernel, in the
// order ptxas compiled them. Works without a GPU.
std::vector<kernel_resources> parse_ptxas_log(std::string_view log);

// What the driver reports for a loaded kernel: registers, local memory per thread (stack and
// spills together, so spills stay -1) and static shared memory. Needs a current context; used
// where NVRTC's log carries no ptxas report.
kernel_resources query_kernel_resources(CUfunction function, const std::string& lowered_name);

// The parameter list of every .entry in a PTX module, by mangled name. Lets argument packing be
// checked against the compiled kernel on a machine without a GPU.
std::map<std::string, std::vector<ptx_parameter>> parse_ptx_parameters(std::string_view ptx);

}  // namespace blaster
