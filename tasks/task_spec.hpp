#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/expression.hpp"
#include "core/timing_mode.hpp"

namespace blaster {

// inout: drawn like an input, then updated in place and checked like an output (a cache a kernel
// appends to). Timing launches it again and again on the same buffer, so its op must give the
// same buffer on a second launch as on the first (an append does).
enum class buffer_role { input, output, inout };

// Whether a buffer is drawn from the seed (input, inout) and whether its final bytes are checked
// against the reference (output, inout).
constexpr bool is_drawn(buffer_role role) { return role != buffer_role::output; }
constexpr bool is_checked(buffer_role role) { return role != buffer_role::input; }

// How an input is drawn. normal: mean, stddev; uniform: [low, high); heavy_tailed: Student's t
// with `dof` degrees of freedom times `scale`; int_range: integers in [low, high]; distinct:
// integers in [low, high], no two elements alike (slots of a cache); distinct_rows: integers in
// [low, high], no two alike within a row of the buffer's last dimension, each row drawn alone
// (a token's top-k experts).
struct distribution {
  std::string kind = "normal";
  double mean = 0.0;
  double stddev = 1.0;
  double low = 0.0;
  double high = 1.0;
  double dof = 3.0;
  double scale = 1.0;
  // int_range only: bounds that depend on the case ("C - 1" for class indices), evaluated into
  // low and high by task_spec::input_distribution.
  std::optional<expression> low_bound = std::nullopt;
  std::optional<expression> high_bound = std::nullopt;
  // distinct_rows only: the elements of a row, the buffer's last dimension in the case, set by
  // task_spec::input_distribution as the bounds are.
  std::int64_t row = 0;
};

// Whether `d` draws integers of [low, high]: int_range, distinct and distinct_rows.
inline bool draws_integers(const distribution& d) {
  return d.kind == "int_range" || d.kind == "distinct" || d.kind == "distinct_rows";
}

struct buffer_spec {
  std::string name;
  dtype type = dtype::f32;
  std::vector<expression> shape;
  buffer_role role = buffer_role::input;
  distribution init;
};

// The sizes an integer symbol may take in drawn cases (drawn_cases.hpp): [min, max], a multiple
// of `multiple` (a vector width or a head count the task's layout requires). A bound may read
// other symbols ("ceil_div(C, BS)", "K"): those are drawn first.
struct symbol_range {
  expression min;
  expression max;
  std::optional<expression> multiple = std::nullopt;  // unset: 1
};

// A scalar the kernels receive: integers (sizes) vary by case, floats (eps) usually do not.
struct symbol_spec {
  std::string name;
  dtype type = dtype::i32;
  std::optional<double> value;  // the default when a case does not set it
  // Unset: drawn cases keep the default (a model's head size the task fixes).
  std::optional<symbol_range> range = std::nullopt;
};

struct task_case {
  std::string name;
  std::string note;
  std::map<std::string, double, std::less<>> values;  // symbol -> value for this case
  // KernelBench's current size, far above the one it was first published with.
  bool large = false;
  // How often this size is served relative to the task's other cases: its share of the mean
  // over the cases that `bench --cases` reports.
  double weight = 1.0;
  // The mode this case is timed in where the user names none, over the task's: a size that is
  // launch-bound (one token) says graph.
  std::optional<blaster::timing_mode> timing_mode = std::nullopt;
  // input buffer -> how this case draws it instead of the buffer's own "init"
  std::map<std::string, distribution, std::less<>> init = {};
};

struct tolerance {
  std::string profile;
  double atol = 0.0;
  double rtol = 0.0;
};

// tasks/<name>/task.json: the contract between a task and every candidate for it.
struct task_spec {
  std::string name;
  std::string title;
  std::string reference;  // the registered float64 reference
  std::filesystem::path dir;
  std::vector<symbol_spec> symbols;
  std::vector<buffer_spec> buffers;
  tolerance tol;
  expression bytes;  // the fewest bytes any correct kernel must move, for the roofline
  // The same bytes as read and written, where the task states them apart: reads alone go faster
  // than a copy, so each kernel is judged against the ceiling of its own mix.
  std::optional<expression> read_bytes;
  std::optional<expression> write_bytes;
  expression flops;
  std::vector<task_case> cases;
  std::string canonical_case;  // the case that is timed
  // The timing mode the task's goals are stated in; unset leaves the choice to the user.
  // Launch-bound tasks say graph.
  std::optional<blaster::timing_mode> timing_mode;
  // "drawn": {"max_bytes"}: the most bytes the buffers of one drawn case may hold [bytes]; 0 where
  // no symbol has a range, and the task draws no cases.
  std::int64_t drawn_max_bytes = 0;

  [[nodiscard]] const task_case& find_case(std::string_view case_name) const;
  [[nodiscard]] const task_case& canonical() const { return find_case(canonical_case); }
  [[nodiscard]] const symbol_spec* find_symbol(std::string_view symbol) const;
  [[nodiscard]] const buffer_spec* find_buffer(std::string_view buffer) const;
  // The dtype the task computes in, as reports and tuned tables name it: its first input of a
  // floating type (rope's q, not its integer positions), else its first input's; empty: none.
  [[nodiscard]] std::string data_dtype() const;
  // The value of a symbol in a case: the case's own, else the symbol's default.
  [[nodiscard]] double value(const task_case& c, std::string_view symbol) const;
  // Integer symbols only: what shape, grid and roofline expressions may read.
  [[nodiscard]] symbol_table integer_symbols(const task_case& c) const;
  [[nodiscard]] std::vector<std::int64_t> shape(const buffer_spec& b, const task_case& c) const;
  [[nodiscard]] std::int64_t elements(const buffer_spec& b, const task_case& c) const;
  // The buffer's size [bytes]; an input_error where it does not fit an int64.
  [[nodiscard]] std::int64_t buffer_bytes(const buffer_spec& b, const task_case& c) const;
  // Throws an input_error when the case's buffers exceed `memory_bytes` (the device's): checked
  // before any allocation, so that the message says why rather than an out-of-memory error.
  void check_fits(const task_case& c, std::uint64_t memory_bytes) const;
  // How input b is drawn in case c: the case's override, else the buffer's own, with bounds
  // that depend on the case evaluated.
  [[nodiscard]] distribution input_distribution(const buffer_spec& b, const task_case& c) const;
  [[nodiscard]] std::string describe(const task_case& c) const;  // "B=16 C=64 H=256 W=256"
};

// Reads and validates <dir>/task.json; every problem is an input_error naming the file, the
// JSON path and what is expected.
task_spec load_task(const std::filesystem::path& dir);

// A task's name is its folder under tasks/: letters, digits, _ and -, so that no name reaches
// outside the root or past the file system's limits. Throws an input_error otherwise.
inline constexpr std::size_t max_task_name_length = 64;

// The buffers of a case that every run checks (three seeds, each against a float64 reference on
// the host) may hold this many bytes; a larger case must be marked "large".
inline constexpr std::int64_t max_checked_case_bytes = std::int64_t{2} << 30;
// No case may hold more, GPU or not: far above any device's memory, and below overflow.
inline constexpr std::int64_t max_case_bytes = std::int64_t{256} << 30;
void check_task_name(std::string_view name);

// The task `name` of the project at `root`: its name checked, then root/tasks/<name>/ loaded.
task_spec load_task(const std::filesystem::path& root, std::string_view name);

}  // namespace blaster
