#pragma once

#include <string>
#include <string_view>

namespace blaster {

// A quantity that describes itself, as nvbench's summaries do: every table, Markdown, CSV and
// JSON column, and the store's metric rows, come from these, so that a new quantity shows up
// everywhere by being defined once.
struct metric_info {
  std::string_view tag{};          // "time_us": the JSON and CSV key, the store's metric tag
  std::string_view name{};         // "time us": the header of tables and Markdown
  std::string_view unit{};         // "us", "%", "x", "GB/s", "MHz"; empty for counts and text
  std::string_view description{};  // one phrase: what it is, for legends and --help
  std::string_view format{};       // how a value shows, "{:.2f}"; empty for text
};

// A metric as the store keeps it (metric_definitions), owning its text. `console`: a column of
// the console table; the other formats show every metric.
struct metric_definition {
  std::string tag{};
  std::string name{};
  std::string unit{};
  std::string description{};
  std::string format{};
  bool console = false;

  // The owning copy of a quantity defined in code.
  [[nodiscard]] static metric_definition of(const metric_info& m) {
    return {std::string(m.tag), std::string(m.name), std::string(m.unit),
            std::string(m.description), std::string(m.format)};
  }
};

}  // namespace blaster
