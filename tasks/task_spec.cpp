#include "tasks/task_spec.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/ranges.h>

#include "core/error.hpp"
#include "tasks/detail/task_json.hpp"

namespace blaster {

const task_case& task_spec::find_case(std::string_view case_name) const {
  for (const auto& c : cases) {
    if (c.name == case_name) return c;
  }
  std::vector<std::string> names;
  for (const auto& c : cases) names.push_back(c.name);
  BLASTER_INPUT_ERROR("task {} has no case \"{}\" (cases: {})", name, case_name,
                      fmt::join(names, ", "));
}

const symbol_spec* task_spec::find_symbol(std::string_view symbol) const {
  for (const auto& s : symbols) {
    if (s.name == symbol) return &s;
  }
  return nullptr;
}

const buffer_spec* task_spec::find_buffer(std::string_view buffer) const {
  for (const auto& b : buffers) {
    if (b.name == buffer) return &b;
  }
  return nullptr;
}

std::string task_spec::data_dtype() const {
  const buffer_spec* first = nullptr;
  for (const auto& b : buffers) {
    if (!is_drawn(b.role)) continue;
    if (is_floating(b.type)) return std::string(name_of(b.type));
    if (first == nullptr) first = &b;
  }
  return first == nullptr ? std::string() : std::string(name_of(first->type));
}

double task_spec::value(const task_case& c, std::string_view symbol) const {
  if (auto it = c.values.find(symbol); it != c.values.end()) return it->second;
  const symbol_spec* s = find_symbol(symbol);
  if (s == nullptr || !s->value) {
    BLASTER_INPUT_ERROR("task {}, case {}: symbol {} has no value", name, c.name, symbol);
  }
  return *s->value;
}

symbol_table task_spec::integer_symbols(const task_case& c) const {
  symbol_table table;
  for (const auto& s : symbols) {
    if (!is_floating(s.type)) table[s.name] = static_cast<std::int64_t>(value(c, s.name));
  }
  return table;
}

std::vector<std::int64_t> task_spec::shape(const buffer_spec& b, const task_case& c) const {
  const symbol_table table = integer_symbols(c);
  std::vector<std::int64_t> dims;
  for (const auto& e : b.shape) dims.push_back(e.evaluate(table));
  return dims;
}

std::int64_t task_spec::elements(const buffer_spec& b, const task_case& c) const {
  std::int64_t count = 1;
  for (std::int64_t d : shape(b, c)) {
    if (d < 0)
      BLASTER_INPUT_ERROR("task {}, case {}: buffer {} has a negative size", name, c.name, b.name);
    if (__builtin_mul_overflow(count, d, &count)) {
      BLASTER_INPUT_ERROR("task {}, case {}: buffer {} is too large", name, c.name, b.name);
    }
  }
  return count;
}

std::int64_t task_spec::buffer_bytes(const buffer_spec& b, const task_case& c) const {
  std::int64_t n = 0;
  if (__builtin_mul_overflow(elements(b, c), static_cast<std::int64_t>(size_of(b.type)), &n)) {
    BLASTER_INPUT_ERROR("task {}, case {}: buffer {} has more bytes than an int64 holds", name,
                        c.name, b.name);
  }
  return n;
}

void task_spec::check_fits(const task_case& c, std::uint64_t memory_bytes) const {
  std::uint64_t total = 0;
  for (const auto& b : buffers) total += static_cast<std::uint64_t>(buffer_bytes(b, c));
  if (total > memory_bytes) {
    BLASTER_INPUT_ERROR(
        "task {}, case {}: its buffers hold {} bytes, more than the device's {} bytes of memory; "
        "shrink the case or run it on a GPU with more memory",
        name, c.name, total, memory_bytes);
  }
}

distribution task_spec::input_distribution(const buffer_spec& b, const task_case& c) const {
  distribution d = b.init;
  if (auto it = c.init.find(b.name); it != c.init.end()) d = it->second;
  if (d.low_bound || d.high_bound) {
    const symbol_table table = integer_symbols(c);
    if (d.low_bound) d.low = static_cast<double>(d.low_bound->evaluate(table));
    if (d.high_bound) d.high = static_cast<double>(d.high_bound->evaluate(table));
    d.low_bound.reset();
    d.high_bound.reset();
  }
  if (d.kind == "distinct_rows") d.row = shape(b, c).back();
  return d;
}

std::string task_spec::describe(const task_case& c) const {
  std::vector<std::string> parts;
  for (const auto& s : symbols) {
    if (!is_floating(s.type)) parts.push_back(fmt::format("{}={}", s.name, value(c, s.name)));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

void check_task_name(std::string_view name) {
  const bool valid = !name.empty() && name.size() <= max_task_name_length &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
                     });
  if (!valid) {
    BLASTER_INPUT_ERROR(
        "\"{:.80}{}\" is not a task name; a task is a folder tasks/<name>/ whose name is 1 to {} "
        "letters, digits, _ or -",
        name, name.size() > 80 ? "..." : "", max_task_name_length);
  }
}

task_spec load_task(const std::filesystem::path& dir) {
  check_task_name(dir.lexically_normal().filename().string());
  const auto path = dir / "task.json";
  const std::string file = path.string();
  if (!std::filesystem::exists(path)) {
    std::vector<std::string> known;
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(dir.parent_path(), ignored)) {
      if (std::filesystem::exists(entry.path() / "task.json")) {
        known.push_back(entry.path().filename().string());
      }
    }
    std::sort(known.begin(), known.end());
    BLASTER_INPUT_ERROR(
        "{}: no such task file (known tasks: {}); a task is a folder "
        "tasks/<name>/ holding task.json, init.cu and reference.cpp",
        file, known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")));
  }
  return detail::read_task_json(dir, path);
}

task_spec load_task(const std::filesystem::path& root, std::string_view name) {
  check_task_name(name);
  return load_task(root / "tasks" / name);
}

}  // namespace blaster
