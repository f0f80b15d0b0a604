#include "benchmarking/candidate/kernel_binding.hpp"

#include <cstring>
#include <limits>

#include "core/cuda_driver.hpp"
#include "core/cuda_module.hpp"
#include "core/error.hpp"

namespace blaster {
namespace {

// What a Hopper block may use; check_device_limits holds a plan against the exact device.
constexpr std::int64_t max_threads_per_block = 1024;
constexpr std::int64_t max_block_z = 64;
constexpr std::int64_t max_dynamic_shared_bytes = 227 * 1024;

std::string_view kind_name(arg_kind kind) {
  switch (kind) {
    case arg_kind::pointer:
      return "a pointer";
    case arg_kind::i32:
      return "i32";
    case arg_kind::i64:
      return "i64";
    case arg_kind::f32:
      return "f32";
    case arg_kind::f64:
      return "f64";
  }
  return "?";
}

[[noreturn]] void fail_at(const std::string& file, source_position where, std::string_view what) {
  BLASTER_INPUT_ERROR("{}:{}:{}: {}", file, where.line, where.column, what);
}

}  // namespace

std::vector<std::vector<kernel_argument>> plan_argument_types(const launch_plan& plan,
                                                              const task_spec& task) {
  auto is_scratch = [&](const std::string& name) {
    return std::any_of(plan.scratch.begin(), plan.scratch.end(),
                       [&](const auto& s) { return s.first == name; });
  };
  std::vector<std::vector<kernel_argument>> out;
  for (const auto& step : plan.launch) {
    std::vector<kernel_argument>& types = out.emplace_back();
    for (const auto& arg : step.args) {
      const std::string name = arg.expr.is_identifier() ? arg.expr.symbols().front() : "";
      const buffer_spec* buffer = task.find_buffer(name);
      const symbol_spec* symbol = task.find_symbol(name);
      if (buffer != nullptr) {
        types.push_back({.pointer = true, .type = buffer->type});
      } else if (!name.empty() && is_scratch(name)) {
        types.push_back({.pointer = true, .type = dtype::i8});
      } else if (symbol != nullptr && is_floating(symbol->type)) {
        types.push_back({.pointer = false, .type = symbol->type});
      } else {
        kernel_argument integer{.pointer = false, .type = dtype::i32};
        for (const auto& used : arg.expr.symbols()) {
          const symbol_spec* s = task.find_symbol(used);
          if (s != nullptr && is_floating(s->type)) {
            fail_at(plan.file, arg.where,
                    fmt::format("{} is a floating-point symbol; only a bare {} may be passed, "
                                "expressions are integer",
                                used, used));
          }
          if (s != nullptr && s->type == dtype::i64) integer.type = dtype::i64;
        }
        types.push_back(integer);
      }
    }
  }
  return out;
}

std::size_t resolved_arg::bytes() const {
  return kind == arg_kind::i32 || kind == arg_kind::f32 ? 4 : 8;
}

resolved_plan resolve_plan(const launch_plan& plan, const candidate_variant& variant,
                           const task_spec& task, const task_case& c) {
  const std::string& file = plan.file;
  // Integer params (VEC, BLOCK) read like symbols in expressions.
  symbol_table symbols = task.integer_symbols(c);
  for (const auto& [name, value] : variant.params) {
    // An expression such as "B*C" must mean the task's B, never a tunable of the same name.
    if (task.find_symbol(name) != nullptr || task.find_buffer(name) != nullptr) {
      fail_at(file, plan.params_where,
              fmt::format("param \"{}\" shadows the task's {} of that name; rename the param", name,
                          task.find_symbol(name) != nullptr ? "symbol" : "buffer"));
    }
    try {
      std::size_t used = 0;
      const std::int64_t n = std::stoll(value, &used);
      if (used == value.size()) symbols[name] = n;
    } catch (const std::exception&) {
      // A non-integer param (a type name) is only for the kernel's template arguments.
    }
  }
  resolved_plan out;
  for (const auto& [name, bytes] : plan.scratch) {
    if (task.find_buffer(name) != nullptr || task.find_symbol(name) != nullptr) {
      fail_at(file, bytes.where,
              fmt::format("scratch buffer \"{}\" shadows the task's {}", name, name));
    }
    const std::int64_t n = evaluate_at(bytes, symbols, file);
    if (n < 0) fail_at(file, bytes.where, fmt::format("scratch \"{}\" has {} bytes", name, n));
    // Bounded before any allocation: no device holds more, and sums of sizes stay in range.
    if (n > max_case_bytes) {
      fail_at(file, bytes.where,
              fmt::format("scratch \"{}\" has {} bytes in case {}, over the limit of {} GiB; "
                          "shrink it",
                          name, n, c.name, max_case_bytes >> 30));
    }
    out.scratch.emplace_back(name, n);
  }
  if (plan.cluster) {
    unsigned blocks = 1;
    for (int d = 0; d < 3; ++d) {
      const std::int64_t n = evaluate_at((*plan.cluster)[d], symbols, file);
      if (n < 1 || n > max_portable_cluster_blocks) {
        fail_at(file, (*plan.cluster)[d].where,
                fmt::format("cluster dimension {} is {}; it must be in [1, {}]", "xyz"[d], n,
                            max_portable_cluster_blocks));
      }
      out.cluster[d] = static_cast<unsigned>(n);
      blocks *= out.cluster[d];
    }
    if (blocks > max_portable_cluster_blocks) {
      fail_at(file, (*plan.cluster)[0].where,
              fmt::format("a cluster of {} blocks; at most {} are portable", blocks,
                          max_portable_cluster_blocks));
    }
  }
  out.cooperative = plan.cooperative;
  if (plan.max_dynamic_shared_bytes) {
    const std::int64_t n = evaluate_at(*plan.max_dynamic_shared_bytes, symbols, file);
    if (n < 0 || n > max_dynamic_shared_bytes) {
      fail_at(file, plan.max_dynamic_shared_bytes->where,
              fmt::format("max_dynamic_shared_bytes is {}; it must be in [0, {}]", n,
                          max_dynamic_shared_bytes));
    }
    out.max_dynamic_shared_bytes = static_cast<unsigned>(n);
  }
  auto is_scratch = [&](const std::string& name) {
    return std::any_of(out.scratch.begin(), out.scratch.end(),
                       [&](const auto& s) { return s.first == name; });
  };

  const auto ptx = parse_ptx_parameters(variant.compiled.ptx);
  for (std::size_t s = 0; s < plan.launch.size(); ++s) {
    const launch_step& step = plan.launch[s];
    resolved_launch launch;
    launch.kernel = variant.kernels.at(s);
    launch.lowered = variant.compiled.lowered_names.at(launch.kernel);
    const auto known = variant.compiled.kernels.find(launch.kernel);
    const frontend_kernel* compiled =
        known == variant.compiled.kernels.end() ? nullptr : &known->second;
    // The harness's own kernels (L2 and instruction sweeps, checks, probes) are told apart from
    // the plan's by name when CUPTI and ncu count: a candidate may not take one of their names.
    if (launch.lowered.starts_with(harness_kernel_prefix)) {
      const std::string symbol = launch.lowered == launch.kernel
                                     ? ""
                                     : fmt::format(" (the symbol \"{}\")", launch.lowered);
      fail_at(file, step.where,
              fmt::format("kernel \"{}\"{}: the prefix \"{}\" is kept for the harness's own "
                          "kernels; rename the kernel",
                          launch.kernel, symbol, harness_kernel_prefix));
    }
    std::int64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
      const std::int64_t g = evaluate_at(step.grid[d], symbols, file);
      const std::int64_t b = compiled != nullptr && compiled->block
                                 ? static_cast<std::int64_t>((*compiled->block)[d])
                                 : evaluate_at(step.block[d], symbols, file);
      const std::int64_t grid_limit = d == 0 ? std::numeric_limits<std::int32_t>::max() : 65535;
      if (g < 1 || g > grid_limit) {
        fail_at(file, step.grid[d].where,
                fmt::format("grid dimension {} is {} for case {} ({}); it must be in [1, {}]",
                            "xyz"[d], g, c.name, task.describe(c), grid_limit));
      }
      const std::int64_t block_limit = d == 2 ? max_block_z : max_threads_per_block;
      if (b < 1 || b > block_limit) {
        fail_at(file, step.block[d].where,
                fmt::format("block dimension {} is {}; it must be in [1, {}]", "xyz"[d], b,
                            block_limit));
      }
      threads *= b;
      launch.grid[d] = static_cast<unsigned>(g);
      launch.block[d] = static_cast<unsigned>(b);
    }
    for (int d = 0; d < 3; ++d) {
      if (launch.grid[d] % out.cluster[d] != 0) {
        fail_at(file, step.grid[d].where,
                fmt::format("grid dimension {} is {} for case {} ({}), not a multiple of the "
                            "cluster's {}",
                            "xyz"[d], launch.grid[d], c.name, task.describe(c), out.cluster[d]));
      }
    }
    if (threads > max_threads_per_block) {
      fail_at(file, step.block[0].where,
              fmt::format("a block of {} threads; at most {}", threads, max_threads_per_block));
    }
    const std::int64_t shared = evaluate_at(step.shared_bytes, symbols, file) +
                                (compiled != nullptr ? compiled->shared_bytes : 0);
    if (shared < 0 || shared > max_dynamic_shared_bytes) {
      fail_at(file, step.shared_bytes.where,
              fmt::format("{} bytes of dynamic shared memory; it must be in [0, {}]", shared,
                          max_dynamic_shared_bytes));
    }
    launch.shared_bytes = static_cast<unsigned>(shared);

    for (const auto& arg : step.args) {
      resolved_arg a;
      a.text = arg.expr.text();
      const std::string name = arg.expr.is_identifier() ? arg.expr.symbols().front() : "";
      const symbol_spec* symbol = task.find_symbol(name);
      if (!name.empty() && (task.find_buffer(name) != nullptr || is_scratch(name))) {
        a.kind = arg_kind::pointer;
        a.buffer = name;
      } else if (symbol != nullptr && is_floating(symbol->type)) {
        a.kind = symbol->type == dtype::f64 ? arg_kind::f64 : arg_kind::f32;
        a.real = task.value(c, name);
      } else {
        for (const auto& used : arg.expr.symbols()) {
          const symbol_spec* s = task.find_symbol(used);
          if (s != nullptr && is_floating(s->type)) {
            fail_at(file, arg.where,
                    fmt::format("{} is a floating-point symbol; only a bare {} may be passed, "
                                "expressions are integer",
                                used, used));
          }
          if (s != nullptr && s->type == dtype::i64) a.kind = arg_kind::i64;
        }
        a.integer = evaluate_at(arg, symbols, file);
        if (a.kind == arg_kind::i32 && (a.integer < std::numeric_limits<std::int32_t>::min() ||
                                        a.integer > std::numeric_limits<std::int32_t>::max())) {
          fail_at(file, arg.where,
                  fmt::format("{} = {} does not fit in i32 for case {}; declare a symbol it "
                              "reads as i64 and take a 64-bit parameter",
                              a.text, a.integer, c.name));
        }
      }
      launch.args.push_back(a);
    }
    // The compiler's scratch: per block of this launch's grid, after the plan's arguments.
    for (const compiler_scratch& scratch : compiled != nullptr ? compiled->scratch
                                                               : std::vector<compiler_scratch>{}) {
      resolved_arg a;
      a.text = scratch.name;
      a.kind = arg_kind::pointer;
      if (scratch.block_bytes > 0) {
        const std::uint64_t blocks =
            std::uint64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
        std::uint64_t bytes = 0;
        if (__builtin_mul_overflow(blocks, scratch.block_bytes, &bytes) ||
            bytes > static_cast<std::uint64_t>(max_case_bytes)) {
          fail_at(file, step.where,
                  fmt::format("{} asks for {} bytes of {} per block, {} blocks in case {}: over "
                              "the limit of {} GiB",
                              launch.kernel, scratch.block_bytes, scratch.name, blocks, c.name,
                              max_case_bytes >> 30));
        }
        a.buffer = fmt::format("launch{}.{}", s + 1, scratch.name);
        out.scratch.emplace_back(a.buffer, static_cast<std::int64_t>(bytes));
      }
      launch.args.push_back(a);
    }

    // The frontend's parameter list where it gave one, and the PTX's where the PTX has the
    // entry: a Triton kernel is held to both.
    std::vector<std::vector<ptx_parameter>> lists;
    if (compiled != nullptr) {
      std::vector<ptx_parameter>& list = lists.emplace_back();
      for (const auto& p : compiled->parameters) list.push_back({p.bytes, p.kind});
    }
    if (auto entry = ptx.find(launch.lowered); entry != ptx.end()) lists.push_back(entry->second);
    for (const auto& params : lists) {
      if (params.size() != launch.args.size()) {
        fail_at(file, step.where,
                fmt::format("{} takes {} parameters; the plan passes {}", launch.kernel,
                            params.size(), launch.args.size()));
      }
      for (std::size_t i = 0; i < params.size(); ++i) {
        const resolved_arg& a = launch.args[i];
        const bool want_float = a.kind == arg_kind::f32 || a.kind == arg_kind::f64;
        const bool is_float = params[i].kind == 'f';
        const bool known_kind = params[i].kind != 'b';
        if (params[i].bytes != a.bytes() || (known_kind && want_float != is_float)) {
          fail_at(file, i < step.args.size() ? step.args[i].where : step.where,
                  fmt::format("argument {} (\"{}\") is {} ({} bytes) but parameter {} of {} is "
                              "{} bytes{}",
                              i + 1, a.text, kind_name(a.kind), a.bytes(), i + 1, launch.kernel,
                              params[i].bytes, is_float ? " of floating point" : ""));
        }
      }
    }
    out.launches.push_back(std::move(launch));
  }
  return out;
}

launch_sequence::launch_sequence(const resolved_plan& plan, const cuda::module& module,
                                 const std::map<std::string, CUdeviceptr, std::less<>>& buffers) {
  const cuda::driver_api& api = cuda::driver();
  // Clusters and cooperative grids are launch attributes: they need cuLaunchKernelEx.
  if (plan.cluster != std::array<unsigned, 3>{1, 1, 1}) {
    CUlaunchAttribute a{};
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = plan.cluster[0];
    a.value.clusterDim.y = plan.cluster[1];
    a.value.clusterDim.z = plan.cluster[2];
    attributes_.push_back(a);
  }
  if (plan.cooperative) {
    CUlaunchAttribute a{};
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value.cooperative = 1;
    attributes_.push_back(a);
  }
  for (const auto& launch : plan.launches) {
    bound b;
    b.kernel = launch.kernel;
    b.function = module.function(launch.lowered);
    b.grid = launch.grid;
    b.block = launch.block;
    b.shared_bytes = launch.shared_bytes;
    const auto sizes = cuda::parameter_sizes(b.function);
    if (sizes.size() != launch.args.size()) {
      BLASTER_INPUT_ERROR("{}: the driver reports {} parameters; the plan passes {}", launch.kernel,
                          sizes.size(), launch.args.size());
    }
    for (std::size_t i = 0; i < launch.args.size(); ++i) {
      const resolved_arg& a = launch.args[i];
      if (sizes[i] != a.bytes()) {
        BLASTER_INPUT_ERROR("{}: parameter {} is {} bytes; the plan passes \"{}\" as {} bytes",
                            launch.kernel, i + 1, sizes[i], a.text, a.bytes());
      }
      const std::size_t offset = b.storage.size();
      b.storage.resize(offset + 8);  // every value gets an 8-byte slot, aligned for all kinds
      std::byte* slot = b.storage.data() + offset;
      switch (a.kind) {
        case arg_kind::pointer: {
          if (a.buffer.empty()) break;  // a null pointer: the slot is zero
          auto it = buffers.find(a.buffer);
          if (it == buffers.end()) BLASTER_THROW("no device buffer bound for {}", a.buffer);
          std::memcpy(slot, &it->second, sizeof(CUdeviceptr));
          break;
        }
        case arg_kind::i32: {
          const auto v = static_cast<std::int32_t>(a.integer);
          std::memcpy(slot, &v, sizeof v);
          break;
        }
        case arg_kind::i64:
          std::memcpy(slot, &a.integer, sizeof a.integer);
          break;
        case arg_kind::f32: {
          const auto v = static_cast<float>(a.real);
          std::memcpy(slot, &v, sizeof v);
          break;
        }
        case arg_kind::f64:
          std::memcpy(slot, &a.real, sizeof a.real);
          break;
      }
    }
    const unsigned shared_limit = std::max(b.shared_bytes, plan.max_dynamic_shared_bytes);
    if (shared_limit > 48 * 1024) {
      cuda::check(
          api.cuFuncSetAttribute(b.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 static_cast<int>(shared_limit)),
          fmt::format("raising the dynamic shared memory of {} to {} bytes", b.kernel,
                      shared_limit));
    }
    for (std::size_t offset = 0; offset < b.storage.size(); offset += 8) {
      b.pointers.push_back(b.storage.data() + offset);
    }
    launches_.push_back(std::move(b));  // moving keeps the storage, so the pointers stay valid
  }
}

void launch_sequence::enqueue(CUstream stream) const {
  for (std::size_t i = 0; i < launches_.size(); ++i) enqueue(stream, i);
}

void launch_sequence::enqueue(CUstream stream, std::size_t launch) const {
  const cuda::driver_api& api = cuda::driver();
  const bound& b = launches_.at(launch);
  if (attributes_.empty()) {
    cuda::check(api.cuLaunchKernel(b.function, b.grid[0], b.grid[1], b.grid[2], b.block[0],
                                   b.block[1], b.block[2], b.shared_bytes, stream,
                                   const_cast<void**>(b.pointers.data()), nullptr),
                fmt::format("launching {}", b.kernel));
    return;
  }
  CUlaunchConfig config{};
  config.gridDimX = b.grid[0];
  config.gridDimY = b.grid[1];
  config.gridDimZ = b.grid[2];
  config.blockDimX = b.block[0];
  config.blockDimY = b.block[1];
  config.blockDimZ = b.block[2];
  config.sharedMemBytes = b.shared_bytes;
  config.hStream = stream;
  config.attrs = const_cast<CUlaunchAttribute*>(attributes_.data());
  config.numAttrs = static_cast<unsigned>(attributes_.size());
  cuda::check(
      api.cuLaunchKernelEx(&config, b.function, const_cast<void**>(b.pointers.data()), nullptr),
      fmt::format("launching {}", b.kernel));
}

void check_device_limits(const resolved_plan& plan, const candidate_variant& variant,
                         const cuda::device_properties& device, std::string_view file) {
  for (const auto& launch : plan.launches) {
    int static_shared = 0;
    for (const auto& k : variant.resources) {
      if (k.lowered_name == launch.lowered) static_shared = std::max(k.shared_bytes, 0);
    }
    const auto threads =
        static_cast<std::int64_t>(launch.block[0]) * launch.block[1] * launch.block[2];
    if (threads > device.max_threads_per_block) {
      BLASTER_INPUT_ERROR(
          "{}: {} is launched with blocks of {} threads; the {} runs at most {} (a limit of the "
          "device, which no flag raises)",
          file, launch.kernel, threads, device.name, device.max_threads_per_block);
    }
    const std::int64_t shared =
        static_cast<std::int64_t>(static_shared) +
        std::max<std::int64_t>(launch.shared_bytes, plan.max_dynamic_shared_bytes);
    if (device.max_shared_per_block_optin_bytes > 0 &&
        shared > device.max_shared_per_block_optin_bytes) {
      BLASTER_INPUT_ERROR(
          "{}: {} asks for {} bytes of shared memory per block ({} static, {} dynamic); the {} "
          "gives a block at most {} (a limit of the device, which no flag raises)",
          file, launch.kernel, shared, static_shared, shared - static_shared, device.name,
          device.max_shared_per_block_optin_bytes);
    }
  }
}

}  // namespace blaster
