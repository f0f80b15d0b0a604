#include "benchmarking/tuned/tuned_lookup.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace blaster {

std::vector<std::pair<std::string, std::string>> shape_key(const task_spec& task,
                                                           const task_case& c,
                                                           const std::string& size_symbol) {
  std::vector<std::pair<std::string, std::string>> key;
  for (const auto& s : task.symbols) {
    if (s.name == size_symbol || is_floating(s.type)) continue;
    key.emplace_back(s.name, fmt::format("{}", static_cast<std::int64_t>(task.value(c, s.name))));
  }
  return key;
}

std::vector<std::pair<std::string, std::string>> toolchain_key(const bench_report& report) {
  std::vector<std::pair<std::string, std::string>> key = {{"nvrtc", report.nvrtc}};
  if (report.device) {
    key.emplace_back("driver", fmt::format("{}.{}", report.device->driver_version / 1000,
                                           report.device->driver_version % 1000 / 10));
  }
  return key;
}

namespace {

// The one integer symbol of the task that the table's name leaves out; empty where there is
// not exactly one.
std::string size_symbol_of(const task_spec& task, const tuned_table& table) {
  std::string size;
  for (const auto& s : task.symbols) {
    if (is_floating(s.type) || !table.key_value(s.name).empty()) continue;
    if (!size.empty()) return {};
    size = s.name;
  }
  return size;
}

}  // namespace

std::filesystem::path tuned_folder(const std::filesystem::path& root, const std::string& task) {
  return root / "kernels" / task / "tuned";
}

std::filesystem::path tuned_folder(const std::filesystem::path& root, const std::string& task,
                                   const std::filesystem::path& candidate) {
  return tuned_folder(root, task) / candidate.stem();
}

std::optional<tuned_choice> find_tuned(const std::filesystem::path& folder, const task_spec& task,
                                       const task_case& c, const tuned_target& target) {
  // The candidate's own tables first, each folder in name order: the same table wins on every
  // machine.
  std::vector<std::filesystem::path> files;
  for (const auto& place : {folder / std::filesystem::path(target.candidate).stem(), folder}) {
    std::error_code error;
    if (!std::filesystem::is_directory(place, error)) continue;
    std::vector<std::filesystem::path> here;
    for (const auto& item : std::filesystem::directory_iterator(place)) {
      if (item.is_regular_file() && item.path().extension() == ".json") here.push_back(item.path());
    }
    std::sort(here.begin(), here.end());
    files.insert(files.end(), here.begin(), here.end());
  }
  std::optional<tuned_choice> best;
  for (const auto& file : files) {
    const tuned_table table = read_tuned_table(file);
    if (table.about.contains("candidate") && table.about.at("candidate") != target.candidate) {
      continue;
    }
    if (table.key_value("device_name") != target.device_name ||
        table.key_value("dtype") != target.dtype) {
      continue;
    }
    const std::string size_symbol = size_symbol_of(task, table);
    if (size_symbol.empty() || table.entries.empty()) continue;
    const auto shape = shape_key(task, c, size_symbol);
    if (!std::all_of(shape.begin(), shape.end(), [&](const auto& pair) {
          return table.key_value(pair.first) == pair.second;
        })) {
      continue;
    }
    const tuned_entry& entry =
        *table.nearest(static_cast<std::int64_t>(task.value(c, size_symbol)));
    tuned_choice choice{.file = file.string(),
                        .sha256 = "",
                        .size_symbol = size_symbol,
                        .size = entry.size,
                        .params = entry.params,
                        .differences = {}};
    for (const auto& [name, value] : target.toolchain) {
      const std::string tuned = table.key_value(name);
      if (tuned != value) {
        choice.differences.push_back(
            fmt::format("{}: {}, here {}", name, tuned.empty() ? "unstated" : tuned, value));
      }
    }
    // A table tuned with this very toolchain is preferred over one tuned with another.
    if (!best || (!best->differences.empty() && choice.differences.empty())) {
      best = std::move(choice);
    }
  }
  return best;
}

std::string describe(const tuned_choice& choice) {
  std::string text =
      fmt::format("the entry {}={} of {}", choice.size_symbol, choice.size, choice.file);
  if (!choice.differences.empty()) {
    text += fmt::format(" (tuned with another toolchain: {})", fmt::join(choice.differences, "; "));
  }
  return text;
}

}  // namespace blaster
