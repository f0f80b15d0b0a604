#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/expression.hpp"

namespace blaster {

// A place in the candidate's .cu file, 1-based, columns counted in bytes.
struct source_position {
  int line = 1;
  int column = 1;
};

// An expression of the plan and where its text starts in the file: the first character inside
// the JSON string's quotes, or the first character of a JSON number.
struct plan_expression {
  expression expr;
  source_position where;
};

// x, y, z; dimensions the plan leaves out are the literal 1.
using dim3_expr = std::array<plan_expression, 3>;

struct launch_step {
  std::string kernel;     // a C++ name expression, may name params: "rmsnorm_rows<VEC>"
  source_position where;  // the kernel name's first character
  dim3_expr grid;
  dim3_expr block;
  plan_expression shared_bytes;  // [bytes], 0 unless given
  // Each a buffer name, a symbol, or an integer expression; bare identifiers are resolved
  // against the task later.
  std::vector<plan_expression> args;
};

// The candidate's launch plan: the JSON in the file's leading `/* blaster ... */` comment.
struct launch_plan {
  std::string file;
  std::vector<launch_step> launch;                                       // run in order
  std::vector<std::pair<std::string, plan_expression>> scratch;          // name -> [bytes]
  std::vector<std::pair<std::string, std::vector<std::string>>> params;  // declaration order
  source_position params_where;  // the "params" key, for errors about the whole space
  bool cooperative = false;
  std::optional<dim3_expr> cluster;
  std::optional<plan_expression> max_dynamic_shared_bytes;  // [bytes]
  // A Triton plan's "source": the kernel taken from another file, "PATH::function"; none when
  // the plan's own file holds it.
  std::optional<std::string> source;
  source_position source_where;
};

// The rules a plan is read by, per kind of candidate: a .cu's plan (every key); a Triton plan
// (no block or shared_bytes, which Triton decides; "source" may name another file's function);
// the plan beside a precompiled image (no params: the image has one configuration).
enum class plan_dialect { cuda, triton, precompiled };

// More configurations than this is a mistake, not a sweep; refused while parsing.
inline constexpr std::size_t max_param_configurations = 65536;

// Every error is an input_error whose message starts with "file:line:col: " pointing into the
// .cu file: a missing or unterminated comment, bad JSON, unknown or duplicate keys, wrong types,
// and malformed expressions (at the exact character inside the expression).
launch_plan parse_launch_plan(std::string_view source, std::string_view file_name);

// The plan whose JSON text is source[json_begin, json_end), where a Triton file or a plan file
// keeps it; errors point into `source` as parse_launch_plan's do.
launch_plan parse_launch_plan_json(std::string_view source, std::string_view file_name,
                                   std::size_t json_begin, std::size_t json_end,
                                   plan_dialect dialect);

// Evaluates one plan expression; an expression_error becomes an input_error "file:line:col: ...".
std::int64_t evaluate_at(const plan_expression& e, const symbol_table& symbols,
                         std::string_view file_name);

// The cartesian product of params in declaration order, the last param varying fastest; one
// empty map when there are none.
std::vector<std::map<std::string, std::string>> expand_params(const launch_plan& plan);

// The kernel name with every param identifier replaced by its value: "rows<VEC>" with VEC=4 is
// "rows<4>". Whole identifiers only: VEC does not touch VECTOR.
std::string instantiate_kernel_name(std::string_view kernel,
                                    const std::map<std::string, std::string>& params);

}  // namespace blaster
