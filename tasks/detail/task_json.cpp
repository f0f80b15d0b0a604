#include "tasks/detail/task_json.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/file_io.hpp"
#include "core/json_reader.hpp"
#include "tasks/detail/case_checks.hpp"
#include "tasks/detail/range_checks.hpp"
#include "tasks/drawn_cases.hpp"

namespace blaster::detail {
namespace {

using json = nlohmann::ordered_json;

// The task file's reader: the shared checks, and the values only a task has.
class reader : public json_reader {
 public:
  using json_reader::json_reader;

  expression expr(const json& value, std::string_view where) const {
    if (value.is_number_integer())
      return expression::parse(std::to_string(value.get<std::int64_t>()));
    if (!value.is_string()) fail(where, "must be an integer or an expression string");
    try {
      return expression::parse(value.get<std::string>());
    } catch (const expression_error& e) {
      fail(where, e.what());
    }
  }

  // A value for a symbol of this type: integer types take non-negative integers only.
  double symbol_value(const json& value, dtype type, std::string_view where) const {
    if (!value.is_number()) fail(where, "must be a number");
    const double v = value.get<double>();
    if (!is_floating(type) && (v != std::floor(v) || v < 0)) {
      fail(where, "must be a non-negative integer");
    }
    return v;
  }

  dtype type(const json& object, std::string_view where, const char* key) const {
    const std::string name = text(object, where, key);
    if (auto t = parse_dtype(name)) return *t;
    std::vector<std::string_view> known;
    for (dtype t : all_dtypes) known.push_back(name_of(t));
    fail(fmt::format("{}.{}", where, key),
         fmt::format("unknown type \"{}\" (known: {})", name, fmt::join(known, ", ")));
  }
};

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// An int_range bound: an integer, or an integer expression over the symbols ("C - 1").
void read_int_bound(const reader& r, const json& j, const std::string& where, const char* key,
                    double& value, std::optional<expression>& bound) {
  if (!j.contains(key)) r.fail(where, fmt::format("missing \"{}\"", key));
  const json& v = j[key];
  const std::string at = fmt::format("{}.{}", where, key);
  if (v.is_string()) {
    bound = r.expr(v, at);
    return;
  }
  if (!v.is_number() || v.get<double>() != std::floor(v.get<double>())) {
    r.fail(at, "must be an integer or an integer expression over the symbols, e.g. \"C - 1\"");
  }
  value = v.get<double>();
}

distribution read_distribution(const reader& r, const json& j, const std::string& where) {
  if (!j.is_object()) {
    r.fail(where, "must be an object such as {\"dist\": \"normal\", \"mean\": 0, \"std\": 1}");
  }
  distribution d;
  d.kind = r.text(j, where, "dist");
  if (d.kind == "normal") {
    r.only_keys(j, where, {"dist", "mean", "std"});
    d.mean = r.number(j, where, "mean", 0.0);
    d.stddev = r.number(j, where, "std", 1.0);
    if (!std::isfinite(d.mean)) r.fail(where + ".mean", "must be finite");
    if (!(d.stddev >= 0 && std::isfinite(d.stddev))) {
      r.fail(where + ".std", "must be finite and not negative (a standard deviation)");
    }
  } else if (d.kind == "uniform") {
    r.only_keys(j, where, {"dist", "low", "high"});
    d.low = r.number(j, where, "low");
    d.high = r.number(j, where, "high");
    if (!(d.low < d.high)) r.fail(where, "\"low\" must be below \"high\"");
  } else if (draws_integers(d)) {
    r.only_keys(j, where, {"dist", "low", "high"});
    read_int_bound(r, j, where, "low", d.low, d.low_bound);
    read_int_bound(r, j, where, "high", d.high, d.high_bound);
    // Bounds that depend on the case are checked once every case is known.
    if (!d.low_bound && !d.high_bound && d.low > d.high) {
      r.fail(where, "\"low\" must not be above \"high\"");
    }
  } else if (d.kind == "heavy_tailed") {
    r.only_keys(j, where, {"dist", "dof", "scale"});
    d.dof = r.number(j, where, "dof", 3.0);
    d.scale = r.number(j, where, "scale", 1.0);
    if (!(d.dof > 0)) r.fail(where, "\"dof\" must be positive");
    if (!(d.scale > 0 && std::isfinite(d.scale))) r.fail(where, "\"scale\" must be positive");
  } else {
    r.fail(where + ".dist", fmt::format("unknown distribution \"{}\" (known: normal, uniform, "
                                        "heavy_tailed, int_range, distinct, distinct_rows)",
                                        d.kind));
  }
  return d;
}

// A size symbol's range: {"min", "max", "multiple"}, each an integer or an expression over the
// other symbols. What the bounds say about each other and the cases is checked once every case is
// known (range_checks).
symbol_range read_range(const reader& r, const json& j, const symbol_spec& symbol,
                        const std::string& where) {
  if (is_floating(symbol.type)) {
    r.fail(where,
           fmt::format("a range is for integer symbols (sizes); {} is {} and keeps its value "
                       "in drawn cases, so remove the range",
                       symbol.name, name_of(symbol.type)));
  }
  if (!j.is_object()) {
    r.fail(where, "must be an object such as {\"min\": 1, \"max\": 16384, \"multiple\": 8}");
  }
  r.only_keys(j, where, {"min", "max", "multiple"});
  auto bound = [&](const char* key, std::int64_t least) {
    const std::string at = fmt::format("{}.{}", where, key);
    const json& v = j[key];
    if (v.is_string()) return r.expr(v, at);
    if (!v.is_number_integer() || v.get<std::int64_t>() < least) {
      r.fail(at, fmt::format("must be an integer of at least {} or an integer expression over the "
                             "other symbols, e.g. \"ceil_div(C, BS)\"",
                             least));
    }
    return expression::parse(std::to_string(v.get<std::int64_t>()));
  };
  for (const char* key : {"min", "max"}) {
    if (!j.contains(key)) {
      r.fail(where, fmt::format("missing \"{}\": a range states the least and the most a size may "
                                "be, e.g. {{\"min\": 1, \"max\": 16384}}",
                                key));
    }
  }
  symbol_range range{.min = bound("min", 0), .max = bound("max", 0)};
  if (j.contains("multiple")) range.multiple = bound("multiple", 1);
  if (j["min"].is_number_integer() && j["max"].is_number_integer() &&
      j["min"].get<std::int64_t>() > j["max"].get<std::int64_t>()) {
    r.fail(where, fmt::format("\"min\" {} is above \"max\" {}; swap them",
                              j["min"].get<std::int64_t>(), j["max"].get<std::int64_t>()));
  }
  return range;
}

}  // namespace

task_spec read_task_json(const std::filesystem::path& dir, const std::filesystem::path& path) {
  const std::string file = path.string();
  const reader r(file);
  const json j = r.parse(read_file(path));
  r.only_keys(j, "task",
              {"name", "title", "kernelbench", "reference", "symbols", "buffers", "tolerance",
               "roofline", "timing", "drawn", "cases"});
  task_spec task;
  task.dir = dir;
  // The folder is the task's identity: it picks the baseline, the kernels and the name the
  // store records, so a file copied into another folder cannot pass for the task it came from.
  const std::string folder = dir.lexically_normal().filename().string();
  task.name = r.text(j, "task", "name");
  if (task.name != folder) {
    r.fail("task.name",
           fmt::format("\"{}\" is not the task's folder \"{}\"; a task is named by its folder, "
                       "so rename one to match the other",
                       task.name, folder));
  }
  task.title = r.text(j, "task", "title", task.name);
  task.reference = r.text(j, "task", "reference", task.name);

  if (!j.contains("symbols") || !j["symbols"].is_object()) r.fail("symbols", "must be an object");
  for (const auto& [name, s] : j["symbols"].items()) {
    const std::string where = "symbols." + name;
    if (!is_identifier(name)) {
      r.fail(where,
             "a symbol's name must be an identifier (letters, digits, _; not first a "
             "digit), so that expressions can refer to it");
    }
    r.only_keys(s, where, {"type", "value", "range"});
    symbol_spec spec;
    spec.name = name;
    spec.type = r.type(s, where, "type");
    if (is_quantized(spec.type)) {
      r.fail(where + ".type",
             fmt::format("{} is a storage format for buffers; a symbol is i32, i64, f32 or f64 "
                         "(a scale is a buffer of one element)",
                         name_of(spec.type)));
    }
    if (s.contains("value")) spec.value = r.symbol_value(s["value"], spec.type, where + ".value");
    if (s.contains("range")) spec.range = read_range(r, s["range"], spec, where + ".range");
    task.symbols.push_back(spec);
  }

  if (!j.contains("buffers") || !j["buffers"].is_object()) r.fail("buffers", "must be an object");
  for (const auto& [name, b] : j["buffers"].items()) {
    const std::string where = "buffers." + name;
    r.only_keys(b, where, {"dtype", "shape", "role", "init"});
    buffer_spec spec;
    spec.name = name;
    spec.type = r.type(b, where, "dtype");
    if (!is_identifier(name)) {
      r.fail(where,
             "a buffer's name must be an identifier (letters, digits, _; not first a "
             "digit), so that plans and expressions can refer to it");
    }
    if (task.find_symbol(name) != nullptr) r.fail(where, "a buffer and a symbol share this name");
    if (!b.contains("shape") || !b["shape"].is_array() || b["shape"].empty()) {
      r.fail(where + ".shape", "must be a non-empty array of expressions");
    }
    for (std::size_t i = 0; i < b["shape"].size(); ++i) {
      spec.shape.push_back(r.expr(b["shape"][i], fmt::format("{}.shape[{}]", where, i)));
    }
    const std::string role = r.text(b, where, "role");
    if (role == "input" || role == "inout") {
      spec.role = role == "input" ? buffer_role::input : buffer_role::inout;
      if (b.contains("init")) spec.init = read_distribution(r, b["init"], where + ".init");
    } else if (role == "output") {
      spec.role = buffer_role::output;
    } else {
      r.fail(where + ".role",
             fmt::format("\"{}\" is not a role (input, output, or inout: drawn, then updated "
                         "in place and checked)",
                         role));
    }
    task.buffers.push_back(std::move(spec));
  }

  const json tol = j.value("tolerance", json::object());
  r.only_keys(tol, "tolerance", {"profile", "atol", "rtol"});
  task.tol = {.profile = r.text(tol, "tolerance", "profile", "custom"),
              .atol = r.number(tol, "tolerance", "atol"),
              .rtol = r.number(tol, "tolerance", "rtol")};
  if (!(task.tol.atol >= 0 && task.tol.rtol >= 0) || !std::isfinite(task.tol.atol) ||
      !std::isfinite(task.tol.rtol)) {
    r.fail("tolerance", "atol and rtol must be finite and >= 0");
  }

  const json roof = j.value("roofline", json::object());
  r.only_keys(roof, "roofline", {"bytes", "read_bytes", "write_bytes", "flops"});
  if (roof.contains("read_bytes") != roof.contains("write_bytes")) {
    r.fail("roofline", "\"read_bytes\" and \"write_bytes\" come together");
  }
  if (roof.contains("read_bytes")) {
    task.read_bytes = r.expr(roof["read_bytes"], "roofline.read_bytes");
    task.write_bytes = r.expr(roof["write_bytes"], "roofline.write_bytes");
    task.bytes = expression::parse(
        fmt::format("({}) + ({})", task.read_bytes->text(), task.write_bytes->text()));
    if (roof.contains("bytes")) {
      r.fail("roofline.bytes", "give either \"bytes\" or \"read_bytes\" and \"write_bytes\"");
    }
  } else if (roof.contains("bytes")) {
    task.bytes = r.expr(roof["bytes"], "roofline.bytes");
  } else {
    r.fail("roofline", "missing \"read_bytes\" and \"write_bytes\" (or their sum, \"bytes\")");
  }
  task.flops =
      roof.contains("flops") ? r.expr(roof["flops"], "roofline.flops") : expression::parse("0");

  // A timing mode by its name, at a JSON path for the error.
  auto mode_at = [&](const json& object, const std::string& where) {
    const std::string mode = r.text(object, where, "mode");
    const std::optional<timing_mode> parsed = parse_timing_mode(mode);
    if (!parsed) {
      r.fail(where + ".mode",
             fmt::format("\"{}\" is not a timing mode ({})", mode, timing_mode_choices()));
    }
    return *parsed;
  };
  if (j.contains("timing")) {
    r.only_keys(j["timing"], "timing", {"mode"});
    task.timing_mode = mode_at(j["timing"], "timing");
  }

  if (j.contains("drawn")) {
    const json& drawn = j["drawn"];
    r.only_keys(drawn, "drawn", {"max_bytes"});
    if (!drawn.contains("max_bytes") || !drawn["max_bytes"].is_number_integer() ||
        drawn["max_bytes"].get<std::int64_t>() <= 0) {
      r.fail("drawn.max_bytes",
             "must be a positive integer: the most bytes the buffers of one drawn case may hold");
    }
    task.drawn_max_bytes = drawn["max_bytes"].get<std::int64_t>();
  }

  if (!j.contains("cases") || !j["cases"].is_array() || j["cases"].empty()) {
    r.fail("cases", "must be a non-empty array");
  }
  for (std::size_t i = 0; i < j["cases"].size(); ++i) {
    const json& c = j["cases"][i];
    const std::string where = fmt::format("cases[{}]", i);
    r.only_keys(c, where,
                {"name", "note", "canonical", "large", "weight", "mode", "symbols", "init"});
    task_case tc;
    tc.name = r.text(c, where, "name");
    if (tc.name.starts_with(drawn_case_prefix)) {
      r.fail(where + ".name", fmt::format("\"{}\" begins with \"{}\", which names the cases drawn "
                                          "from the ranges; give the case another name",
                                          tc.name, drawn_case_prefix));
    }
    if (c.contains("mode")) tc.timing_mode = mode_at(c, where);
    tc.note = r.text(c, where, "note", "");
    tc.weight = r.number(c, where, "weight", 1.0);
    if (!(tc.weight > 0.0 && std::isfinite(tc.weight))) {
      r.fail(where + ".weight",
             "must be a positive number: how often this size is served, relative to the others");
    }
    for (const char* flag : {"canonical", "large"}) {
      if (c.contains(flag) && !c[flag].is_boolean()) {
        r.fail(fmt::format("{}.{}", where, flag), "must be true or false");
      }
    }
    tc.large = c.value("large", false);
    if (c.value("canonical", false)) {
      if (!task.canonical_case.empty()) r.fail(where, "only one case may be canonical");
      task.canonical_case = tc.name;
    }
    const json values = c.value("symbols", json::object());
    for (const auto& [symbol, value] : values.items()) {
      const symbol_spec* s = task.find_symbol(symbol);
      if (s == nullptr) r.fail(where + ".symbols", fmt::format("unknown symbol \"{}\"", symbol));
      tc.values[symbol] = r.symbol_value(value, s->type, where + ".symbols." + symbol);
    }
    if (c.contains("init")) {
      const json& init = c["init"];
      if (!init.is_object()) {
        r.fail(where + ".init",
               "must be an object from input buffer to distribution, such as {\"x\": "
               "{\"dist\": \"normal\", \"std\": 30}}");
      }
      for (const auto& [buffer, d] : init.items()) {
        const std::string at = fmt::format("{}.init.{}", where, buffer);
        const buffer_spec* b = task.find_buffer(buffer);
        if (b == nullptr || !is_drawn(b->role)) {
          std::vector<std::string> inputs;
          for (const auto& candidate : task.buffers) {
            if (is_drawn(candidate.role)) inputs.push_back(candidate.name);
          }
          r.fail(at, fmt::format("{} \"{}\"; only inputs are drawn (inputs: {})",
                                 b == nullptr ? "unknown buffer" : "an output buffer", buffer,
                                 fmt::join(inputs, ", ")));
        }
        tc.init[buffer] = read_distribution(r, d, at);
      }
    }
    for (const auto& s : task.symbols) {
      if (!s.value && !tc.values.contains(s.name)) {
        r.fail(where, fmt::format("symbol {} has no value here and no default", s.name));
      }
    }
    for (const auto& other : task.cases) {
      if (other.name == tc.name) r.fail(where, fmt::format("a second case named \"{}\"", tc.name));
    }
    task.cases.push_back(std::move(tc));
  }
  if (task.canonical_case.empty()) task.canonical_case = task.cases.front().name;

  // Every expression must evaluate in every case now, not halfway through a run.
  check_cases(task, r);
  // The ranges hold every case, and the smallest allowed case is one a run can check.
  check_ranges(task, r);
  // An input that its storage type cannot hold is refused before anything is drawn.
  refuse_saturated_inputs(task, r);
  return task;
}

}  // namespace blaster::detail
