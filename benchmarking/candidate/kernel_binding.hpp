#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarking/candidate/candidate.hpp"
#include "core/cuda_context.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

namespace cuda {
class module;
}

// How one kernel argument is passed: a device pointer to a buffer, or a scalar of the type
// the task declares (integer expressions take the widest integer type they read).
enum class arg_kind { pointer, i32, i64, f32, f64 };

struct resolved_arg {
  std::string text;  // as the plan wrote it
  arg_kind kind = arg_kind::i32;
  std::string buffer;        // pointer only; empty: a null pointer (a compiler's empty scratch)
  std::int64_t integer = 0;  // i32, i64
  double real = 0.0;         // f32, f64
  [[nodiscard]] std::size_t bytes() const;
};

struct resolved_launch {
  std::string kernel;   // name expression with params substituted
  std::string lowered;  // the compiled kernel's symbol
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned shared_bytes = 0;  // [bytes] dynamic shared memory
  std::vector<resolved_arg> args;
};

// Thread-block clusters allowed without the driver's non-portable opt-in.
inline constexpr unsigned max_portable_cluster_blocks = 8;

// The prefix of the harness's own kernels, which no candidate's may take: CUPTI's kernel account
// and ncu's filter leave those names out.
inline constexpr std::string_view harness_kernel_prefix = "blaster_";

// A plan with every expression evaluated for one case: what the harness will launch.
struct resolved_plan {
  std::vector<resolved_launch> launches;
  std::vector<std::pair<std::string, std::int64_t>> scratch;  // name, [bytes]
  // The plan's launch attributes, for every launch: blocks per cluster (1, 1, 1 without), a
  // cooperative launch (a grid whose blocks are all resident at once), and the dynamic shared
  // memory each kernel may be launched with.
  std::array<unsigned, 3> cluster{1, 1, 1};
  bool cooperative = false;
  unsigned max_dynamic_shared_bytes = 0;  // [bytes] 0: what each launch asks for
};

// The type of each argument of each launch step, as a frontend that compiles a kernel from its
// call (Triton) needs it: a buffer is a pointer to its dtype (a scratch buffer to bytes, i8), a
// floating-point symbol its type, and an integer expression i32, or i64 when it reads an i64
// symbol. An input_error pointing into the file names an argument no type fits.
std::vector<std::vector<kernel_argument>> plan_argument_types(const launch_plan& plan,
                                                              const task_spec& task);

// Evaluates the plan for a case and checks what can be checked without a GPU: names, grid and
// block limits, shared memory, and each argument's size and kind against the kernel's PTX
// parameters. What the frontend says of a kernel (frontend_kernel) is applied here: its block,
// its dynamic shared memory added to the plan's, and its scratch, allocated per block of the
// grid as a buffer "launchN.NAME" and passed after the plan's arguments. Every problem is an input_error pointing into the candidate file.
resolved_plan resolve_plan(const launch_plan& plan, const candidate_variant& variant,
                           const task_spec& task, const task_case& c);

// The plan against the device it is about to run on: threads per block, and static plus dynamic
// shared memory per block. Each problem is an input_error (a plan_error) naming the device's
// limit.
void check_device_limits(const resolved_plan& plan, const candidate_variant& variant,
                         const cuda::device_properties& device, std::string_view file);

// The resolved plan bound to a loaded module and device buffers, ready to enqueue again and
// again. The constructor checks the argument sizes once more against the driver's view of
// each kernel.
class launch_sequence {
 public:
  launch_sequence(const resolved_plan& plan, const cuda::module& module,
                  const std::map<std::string, CUdeviceptr, std::less<>>& buffers);

  void enqueue(CUstream stream) const;
  // The plan's launch of this index alone.
  void enqueue(CUstream stream, std::size_t launch) const;
  [[nodiscard]] std::size_t size() const noexcept { return launches_.size(); }

 private:
  struct bound {
    CUfunction function = nullptr;
    std::array<unsigned, 3> grid{};
    std::array<unsigned, 3> block{};
    unsigned shared_bytes = 0;
    std::vector<std::byte> storage;  // the packed argument values, 8 bytes a slot
    std::vector<void*> pointers;     // into storage, as cuLaunchKernel takes them
    std::string kernel;
  };
  std::vector<bound> launches_;
  std::vector<CUlaunchAttribute> attributes_;  // the plan's cluster and cooperative launch
};

}  // namespace blaster
