#include "core/detail/plan_reader.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/detail/json_positions.hpp"
#include "core/error.hpp"

namespace blaster::detail {

namespace {

// ordered_json keeps the declaration order of scratch and params.
using json = nlohmann::ordered_json;

constexpr std::string_view plan_opener = "/* blaster";
constexpr std::string_view plan_closer = "*/";

// Kernel names and param values reach NVRTC's preprocessor (name expressions, -D defines): a
// new-line there could start a directive of its own.
bool has_control_character(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7F;
  });
}

bool is_identifier(std::string_view s) {
  return !s.empty() && is_identifier_start(s.front()) &&
         std::all_of(s.begin(), s.end(), is_identifier_char);
}

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (const auto name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Reads and checks the plan; every error names the place in the .cu file.
class plan_reader {
 public:
  plan_reader(std::string_view source, std::string_view file, plan_dialect dialect)
      : source_(source), file_(file), dialect_(dialect) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  launch_plan read() { return read_json(locate_comment()); }

  // The plan whose JSON is source[json_begin, json_end).
  launch_plan read_span(std::size_t json_begin, std::size_t json_end) {
    json_end_ = json_end;
    return read_json(json_begin);
  }

 private:
  launch_plan read_json(std::size_t json_begin) {
    const json root = parse_json(json_begin);
    const json_positions positions(source_.substr(json_begin, json_end_ - json_begin));
    if (const auto offset = positions.too_deep()) {
      fail(json_begin + *offset, "the launch plan's JSON is nested too deeply");
    }
    if (const auto& duplicate = positions.duplicate()) {
      fail(json_begin + duplicate->offset,
           fmt::format("duplicate key \"{}\"; each key may appear once", duplicate->key));
    }
    json_begin_ = json_begin;
    positions_ = &positions;

    launch_plan plan;
    plan.file = std::string(file_);
    if (!root.is_object()) {
      fail_value("", "the launch plan must be a JSON object such as {\"launch\": [...]}");
    }
    switch (dialect_) {
      case plan_dialect::cuda:
        check_keys(
            root, "", "the launch plan",
            {"launch", "scratch", "params", "cooperative", "cluster", "max_dynamic_shared_bytes"});
        break;
      case plan_dialect::triton:
        // Triton's own launcher decides clusters and cooperative grids from the kernel.
        check_keys(root, "", "a Triton launch plan", {"launch", "scratch", "params", "source"});
        break;
      case plan_dialect::precompiled:
        if (root.contains("params")) {
          fail(json_begin_ + positions_->key_at(child("", "params")),
               "a precompiled image has one configuration: \"params\" cannot change it; "
               "compile each configuration to a file of its own");
        }
        check_keys(root, "", "the launch plan of a precompiled image",
                   {"launch", "scratch", "cooperative", "cluster", "max_dynamic_shared_bytes"});
        break;
    }

    if (!root.contains("launch")) {
      fail_value("", "the launch plan has no \"launch\": a non-empty array of launch steps");
    }
    const json& launch = root.at("launch");
    if (!launch.is_array() || launch.empty()) {
      fail_value("/launch", "\"launch\" must be a non-empty array of launch steps");
    }
    for (std::size_t i = 0; i < launch.size(); ++i) {
      plan.launch.push_back(read_step(launch[i], child("/launch", i), i + 1));
    }

    if (root.contains("scratch")) read_scratch(root.at("scratch"), plan);
    if (root.contains("source")) {
      const json& source = root.at("source");
      const std::string& text = source.is_string() ? source.get_ref<const std::string&>() : "";
      const std::size_t separator = text.rfind("::");
      if (separator == std::string::npos || separator == 0 ||
          !is_identifier(std::string_view(text).substr(separator + 2)) ||
          has_control_character(text)) {
        fail_value("/source",
                   "\"source\" must name a function in another file as \"PATH::function\", "
                   "such as \"fused_moe.py::fused_moe_kernel\"");
      }
      plan.source = text;
      plan.source_where = position(value_offset("/source") + 1);
    }
    if (root.contains("params")) {
      plan.params_where = position(json_begin_ + positions_->key_at(child("", "params")));
      read_params(root.at("params"), plan);
    }
    if (root.contains("cooperative")) {
      if (!root.at("cooperative").is_boolean()) {
        fail_value("/cooperative", "\"cooperative\" must be true or false");
      }
      plan.cooperative = root.at("cooperative").get<bool>();
    }
    if (root.contains("cluster")) {
      plan.cluster = read_dim(root.at("cluster"), "/cluster", "cluster");
    }
    if (root.contains("max_dynamic_shared_bytes")) {
      plan.max_dynamic_shared_bytes =
          read_expression(root.at("max_dynamic_shared_bytes"), "/max_dynamic_shared_bytes",
                          "\"max_dynamic_shared_bytes\"",
                          "\"max_dynamic_shared_bytes\" must be an integer or an expression "
                          "string");
    }
    return plan;
  }

  source_position position(std::size_t offset) const {
    const auto next_line = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const auto line = static_cast<int>(next_line - line_starts_.begin());
    return {line, static_cast<int>(offset - *(next_line - 1)) + 1};
  }

  [[noreturn]] void fail(std::size_t offset, const std::string& message) const {
    const source_position p = position(offset);
    BLASTER_INPUT_ERROR("{}:{}:{}: {}", file_, p.line, p.column, message);
  }
  [[noreturn]] void fail_value(const std::string& pointer, const std::string& message) const {
    fail(value_offset(pointer), message);
  }

  std::size_t value_offset(const std::string& pointer) const {
    return json_begin_ + positions_->value_at(pointer);
  }

  // Returns where the JSON text begins; sets json_end_ to the comment's closing "*/".
  std::size_t locate_comment() {
    std::size_t start = 0;
    if (source_.starts_with("\xEF\xBB\xBF")) start = 3;  // a UTF-8 byte order mark
    while (start < source_.size() && is_json_space(source_[start])) ++start;
    const auto is_opener_at = [&](std::size_t at) {
      const std::size_t after = at + plan_opener.size();
      return source_.substr(at).starts_with(plan_opener) &&
             (after == source_.size() || !is_identifier_char(source_[after]));
    };
    if (!is_opener_at(start)) {
      for (std::size_t at = source_.find(plan_opener); at != std::string_view::npos;
           at = source_.find(plan_opener, at + 1)) {
        if (is_opener_at(at)) {
          fail(start,
               "text before the launch plan: only whitespace may precede the '/* blaster' "
               "comment");
        }
      }
      fail(0, "no launch plan: a candidate begins with a /* blaster {...} */ comment");
    }
    const std::size_t json_begin = start + plan_opener.size();
    json_end_ = source_.find(plan_closer, json_begin);
    if (json_end_ == std::string_view::npos) {
      fail(start, "unterminated launch plan: the '/* blaster' comment has no closing '*/'");
    }
    return json_begin;
  }

  json parse_json(std::size_t json_begin) const {
    const std::string_view text = source_.substr(json_begin, json_end_ - json_begin);
    try {
      return json::parse(text);
    } catch (const json::parse_error& e) {
      // e.byte is the 1-based index of the last character read: the one that broke the
      // syntax, or one past the end. nlohmann's own line and column are relative to the
      // comment, so only its explanation after "column N: " is kept.
      const std::size_t offset = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size());
      std::string_view what = e.what();
      if (const auto column = what.find(", column "); column != std::string_view::npos) {
        if (const auto colon = what.find(": ", column); colon != std::string_view::npos) {
          what.remove_prefix(colon + 2);
        }
      }
      fail(json_begin + offset, fmt::format("invalid JSON in the launch plan: {}", what));
    } catch (const json::exception& e) {
      // Such as a number too large for a double: no position, so point at the plan.
      fail(json_begin, fmt::format("invalid JSON in the launch plan: {}", e.what()));
    }
  }

  void check_keys(const json& object, const std::string& pointer, std::string_view what,
                  const std::vector<std::string_view>& allowed) const {
    for (const auto& [key, value] : object.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string message =
          fmt::format("unknown key \"{}\" in {}; allowed keys: {}", key, what, join(allowed));
      for (const auto candidate : allowed) {
        if (edit_distance(key, candidate) <= 2) {
          message += fmt::format(" (did you mean \"{}\"?)", candidate);
          break;
        }
      }
      fail(json_begin_ + positions_->key_at(child(pointer, key)), message);
    }
  }

  launch_step read_step(const json& step, const std::string& pointer, std::size_t number) {
    if (dialect_ == plan_dialect::triton) return read_triton_step(step, pointer, number);
    if (!step.is_object()) {
      fail_value(pointer, fmt::format("launch step {} must be an object with \"kernel\", "
                                      "\"grid\", \"block\" and \"args\"",
                                      number));
    }
    const std::string what = fmt::format("launch step {}", number);
    check_keys(step, pointer, what, {"kernel", "grid", "block", "shared_bytes", "args"});
    for (const char* required : {"kernel", "grid", "block"}) {
      if (!step.contains(required)) {
        fail_value(pointer, fmt::format("{} has no \"{}\"; a step needs kernel, grid and block",
                                        what, required));
      }
    }
    launch_step out;
    const json& kernel = step.at("kernel");
    const std::string kernel_pointer = child(pointer, "kernel");
    if (!kernel.is_string() ||
        std::all_of(kernel.get_ref<const std::string&>().begin(),
                    kernel.get_ref<const std::string&>().end(), is_json_space)) {
      fail_value(kernel_pointer, "\"kernel\" must be a non-empty string naming the kernel");
    }
    out.kernel = kernel.get<std::string>();
    if (has_control_character(out.kernel)) {
      fail_value(kernel_pointer,
                 "\"kernel\" holds a control character such as a new-line; a kernel is named by "
                 "one line of C++, such as \"rows<VEC>\"");
    }
    out.where = position(value_offset(kernel_pointer) + 1);
    out.grid = read_dim(step.at("grid"), child(pointer, "grid"), "grid");
    out.block = read_dim(step.at("block"), child(pointer, "block"), "block");
    if (step.contains("shared_bytes")) {
      out.shared_bytes = read_expression(
          step.at("shared_bytes"), child(pointer, "shared_bytes"), "\"shared_bytes\"",
          "\"shared_bytes\" must be an integer or an expression string");
    } else {
      out.shared_bytes = {expression::parse("0"), position(value_offset(pointer))};
    }
    if (step.contains("args")) read_args(step.at("args"), child(pointer, "args"), out);
    return out;
  }

  // A Triton step names a @triton.jit function; its block (num_warps warps) and dynamic shared
  // memory are what Triton compiled it for, so the plan does not state them.
  launch_step read_triton_step(const json& step, const std::string& pointer, std::size_t number) {
    if (!step.is_object()) {
      fail_value(pointer, fmt::format("launch step {} must be an object with \"kernel\", "
                                      "\"grid\" and \"args\"",
                                      number));
    }
    const std::string what = fmt::format("launch step {}", number);
    for (const char* fixed : {"block", "shared_bytes"}) {
      if (step.contains(fixed)) {
        fail(json_begin_ + positions_->key_at(child(pointer, fixed)),
             fmt::format("a Triton kernel's \"{}\" is what Triton compiles it for (num_warps "
                         "warps, the shared memory it asks); leave it out, and set num_warps "
                         "in \"params\"",
                         fixed));
      }
    }
    check_keys(step, pointer, what, {"kernel", "grid", "args"});
    for (const char* required : {"kernel", "grid"}) {
      if (!step.contains(required)) {
        fail_value(pointer,
                   fmt::format("{} has no \"{}\"; a Triton step needs kernel and grid", what,
                               required));
      }
    }
    launch_step out;
    const json& kernel = step.at("kernel");
    const std::string kernel_pointer = child(pointer, "kernel");
    if (!kernel.is_string() || !is_identifier(kernel.get_ref<const std::string&>())) {
      fail_value(kernel_pointer, "\"kernel\" must name a @triton.jit function of the file");
    }
    out.kernel = kernel.get<std::string>();
    out.where = position(value_offset(kernel_pointer) + 1);
    out.grid = read_dim(step.at("grid"), child(pointer, "grid"), "grid");
    const plan_expression one{expression::parse("1"), out.where};
    out.block = {one, one, one};
    out.shared_bytes = {expression::parse("0"), out.where};
    if (step.contains("args")) read_args(step.at("args"), child(pointer, "args"), out);
    return out;
  }

  void read_args(const json& args, const std::string& args_pointer, launch_step& out) {
    const std::string type_message =
        "\"args\" must be an array of buffer names, symbols or integer expressions, such as "
        "[\"out\", \"x\", \"B*C\"]";
    if (!args.is_array()) fail_value(args_pointer, type_message);
    for (std::size_t i = 0; i < args.size(); ++i) {
      out.args.push_back(
          read_expression(args[i], child(args_pointer, i), "\"args\"", type_message));
    }
  }

  dim3_expr read_dim(const json& value, const std::string& pointer, std::string_view key) {
    const std::string type_message = fmt::format(
        "\"{}\" must be an integer, an expression string, or an array of 1 to 3 of them", key);
    const std::string label = fmt::format("\"{}\"", key);
    dim3_expr dims;
    if (!value.is_array()) {
      dims[0] = read_expression(value, pointer, label, type_message);
      dims[1] = dims[2] = {expression::parse("1"), dims[0].where};
      return dims;
    }
    if (value.empty() || value.size() > 3) {
      fail_value(pointer, fmt::format("{}; this array has {}", type_message, value.size()));
    }
    const source_position where = position(value_offset(pointer));
    for (std::size_t i = 0; i < 3; ++i) {
      dims[i] = i < value.size() ? read_expression(value[i], child(pointer, i), label, type_message)
                                 : plan_expression{expression::parse("1"), where};
    }
    return dims;
  }

  plan_expression read_expression(const json& value, const std::string& pointer,
                                  std::string_view label, const std::string& type_message) {
    const std::size_t offset = value_offset(pointer);
    if (value.is_number_unsigned()) {
      const auto number = value.get<std::uint64_t>();
      if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        fail(offset, fmt::format("{} value {} does not fit in 64 bits", label, number));
      }
      return {expression::parse(std::to_string(number)), position(offset)};
    }
    if (value.is_number_integer()) {
      return {expression::parse(std::to_string(value.get<std::int64_t>())), position(offset)};
    }
    if (!value.is_string()) fail(offset, type_message);
    const auto& text = value.get_ref<const std::string&>();
    try {
      // The text starts after the opening quote; JSON strings hold no raw newlines, so the
      // expression's columns are the file's columns on that line (escapes aside).
      return {expression::parse(text), position(offset + 1)};
    } catch (const expression_error& e) {
      fail(offset + 1 + e.column(),
           fmt::format("invalid {} expression '{}': {}", label, text, e.what()));
    }
  }

  void read_scratch(const json& scratch, launch_plan& plan) {
    if (!scratch.is_object()) {
      fail_value("/scratch",
                 "\"scratch\" must be an object mapping buffer names to byte counts, "
                 "such as {\"partial\": \"B*C*4\"}");
    }
    for (const auto& [name, bytes] : scratch.items()) {
      const std::string pointer = child("/scratch", name);
      if (!is_identifier(name)) {
        fail(json_begin_ + positions_->key_at(pointer),
             fmt::format("scratch buffer name \"{}\" must be an identifier "
                         "([A-Za-z_][A-Za-z0-9_]*) so that \"args\" can name it",
                         name));
      }
      const std::string label = fmt::format("scratch \"{}\"", name);
      plan.scratch.emplace_back(
          name, read_expression(bytes, pointer, label,
                                label + " must be a byte count: an integer or an expression "
                                        "string"));
    }
  }

  void read_params(const json& params, launch_plan& plan) {
    if (!params.is_object()) {
      fail_value("/params",
                 "\"params\" must be an object mapping names to arrays of values, "
                 "such as {\"VEC\": [2, 4, 8]}");
    }
    std::size_t configurations = 1;
    for (const auto& [name, values] : params.items()) {
      const std::string pointer = child("/params", name);
      if (!is_identifier(name)) {
        fail(json_begin_ + positions_->key_at(pointer),
             fmt::format("param name \"{}\" must be an identifier ([A-Za-z_][A-Za-z0-9_]*)", name));
      }
      if (!values.is_array() || values.empty()) {
        fail_value(pointer, fmt::format("param \"{}\" must be a non-empty array of values, such "
                                        "as [2, 4, 8]",
                                        name));
      }
      std::vector<std::string> texts;
      for (std::size_t i = 0; i < values.size(); ++i) {
        const json& v = values[i];
        std::string text;
        if (v.is_number_unsigned()) {
          text = std::to_string(v.get<std::uint64_t>());
        } else if (v.is_number_integer()) {
          text = std::to_string(v.get<std::int64_t>());
        } else if (v.is_string() && !v.get_ref<const std::string&>().empty()) {
          text = v.get<std::string>();
          if (has_control_character(text)) {
            fail_value(child(pointer, i),
                       fmt::format("a value of param \"{}\" holds a control character such as a "
                                   "new-line; values are one line of C++",
                                   name));
          }
        } else {
          fail_value(
              child(pointer, i),
              fmt::format("values of param \"{}\" must be integers or non-empty strings", name));
        }
        if (std::find(texts.begin(), texts.end(), text) != texts.end()) {
          fail_value(child(pointer, i),
                     fmt::format("param \"{}\" lists the value {} twice", name, text));
        }
        texts.push_back(std::move(text));
      }
      if (__builtin_mul_overflow(configurations, texts.size(), &configurations) ||
          configurations > max_param_configurations) {
        fail_value("/params", fmt::format("\"params\" expand to more than {} configurations",
                                          max_param_configurations));
      }
      plan.params.emplace_back(name, std::move(texts));
    }
  }

  std::string_view source_;
  std::string_view file_;
  plan_dialect dialect_ = plan_dialect::cuda;
  std::vector<std::size_t> line_starts_;
  std::size_t json_begin_ = 0;
  std::size_t json_end_ = 0;
  const json_positions* positions_ = nullptr;
};

}  // namespace

launch_plan read_launch_plan(std::string_view source, std::string_view file) {
  return plan_reader(source, file, plan_dialect::cuda).read();
}

launch_plan read_launch_plan_json(std::string_view source, std::string_view file,
                                  std::size_t json_begin, std::size_t json_end,
                                  plan_dialect dialect) {
  return plan_reader(source, file, dialect).read_span(json_begin, json_end);
}

}  // namespace blaster::detail
