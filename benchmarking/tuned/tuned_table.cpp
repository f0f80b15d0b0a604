#include "benchmarking/tuned/tuned_table.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/json_reader.hpp"

namespace blaster {
namespace {

using json = json_reader::json;

// An entry's keys that are measurements, not params: a plan's params cannot take these names.
constexpr std::string_view time_key = "time_us";
constexpr std::string_view interval_key = "interval_us";
constexpr std::string_view default_key = "default_time_us";
constexpr std::string_view run_key = "run_id";

bool is_measurement(std::string_view key) {
  return key == time_key || key == interval_key || key == default_key || key == run_key;
}

std::optional<std::int64_t> size_of_key(std::string_view key) {
  std::int64_t size = 0;
  const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), size);
  if (error != std::errc() || end != key.data() + key.size() || size < 0) return std::nullopt;
  return size;
}

// A param's value as the table writes it: a number where it is one, as engines' tables do, and
// only where the number reads back as the same text ("007" stays a string).
json value_json(const std::string& value) {
  std::int64_t integer = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), integer);
  if (error == std::errc() && end == value.data() + value.size() &&
      std::to_string(integer) == value) {
    return integer;
  }
  return value;
}

std::string value_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

const tuned_entry* tuned_table::nearest(std::int64_t size) const {
  const tuned_entry* best = nullptr;
  for (const auto& e : entries) {  // ascending: the first of two equally near is the smaller
    if (best == nullptr || std::llabs(e.size - size) < std::llabs(best->size - size)) best = &e;
  }
  return best;
}

void tuned_table::put(tuned_entry entry) {
  const auto at =
      std::lower_bound(entries.begin(), entries.end(), entry.size,
                       [](const tuned_entry& e, std::int64_t size) { return e.size < size; });
  if (at != entries.end() && at->size == entry.size) {
    *at = std::move(entry);
  } else {
    entries.insert(at, std::move(entry));
  }
}

std::string tuned_table::key_value(std::string_view name) const {
  for (const auto& [k, v] : key) {
    if (k == name) return v;
  }
  return {};
}

nlohmann::json to_json(const tuned_choice& choice) {
  return {{"file", choice.file}, {"sha256", choice.sha256}, {"size_symbol", choice.size_symbol},
          {"size", choice.size}, {"params", choice.params}, {"differences", choice.differences}};
}

tuned_choice tuned_choice_from_json(const nlohmann::json& j) {
  return {.file = j.at("file").get<std::string>(),
          .sha256 = j.value("sha256", std::string()),
          .size_symbol = j.at("size_symbol").get<std::string>(),
          .size = j.at("size").get<std::int64_t>(),
          .params = j.value("params", std::map<std::string, std::string>()),
          .differences = j.value("differences", std::vector<std::string>())};
}

std::string device_name_key(std::string_view cuda_name) {
  std::string out(cuda_name);
  std::replace(out.begin(), out.end(), ' ', '_');
  return out;
}

std::string tuned_file_name(const std::vector<std::pair<std::string, std::string>>& key) {
  std::string name;
  for (const auto& [k, v] : key) {
    if (k.empty() || k.find_first_of("=,/") != std::string::npos ||
        v.find('/') != std::string::npos) {
      BLASTER_THROW("a tuned table's key {}={} cannot be part of a file name", k, v);
    }
    name += (name.empty() ? "" : ",") + k + "=" + v;
  }
  return name + ".json";
}

std::vector<std::pair<std::string, std::string>> parse_tuned_file_name(std::string_view name) {
  const std::string shown(name);
  if (!name.ends_with(".json")) {
    BLASTER_INPUT_ERROR("{}: a tuned table's name ends in .json", shown);
  }
  name.remove_suffix(5);
  std::vector<std::pair<std::string, std::string>> key;
  // A comma inside brackets belongs to its value ("block_shape=[128, 128]").
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i < name.size() && name[i] == '[') ++depth;
    if (i < name.size() && name[i] == ']') --depth;
    if (i < name.size() && (name[i] != ',' || depth > 0)) continue;
    const std::string_view pair = name.substr(start, i - start);
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      BLASTER_INPUT_ERROR(
          "{}: \"{}\" is not a key=value pair; a tuned table is named by key=value pairs joined "
          "by commas, such as N=4096,device_name=NVIDIA_H200.json",
          shown, pair);
    }
    key.emplace_back(std::string(pair.substr(0, equals)), std::string(pair.substr(equals + 1)));
    start = i + 1;
  }
  if (depth != 0) BLASTER_INPUT_ERROR("{}: a bracket in the name is not closed", shown);
  return key;
}

tuned_table read_tuned_table(const std::filesystem::path& file) {
  const json_reader reader(file.string());
  tuned_table table;
  table.key = parse_tuned_file_name(file.filename().string());
  // Sorted keys: an engine's table may hold a million sizes, and their order is the sizes'.
  const nlohmann::json doc = reader.parse_sorted(read_file(file));
  if (!doc.is_object()) reader.fail("the table", "must be an object of sizes");
  for (const auto& [name, value] : doc.items()) {
    const std::optional<std::int64_t> size = size_of_key(name);
    if (!size) {
      // Not a size: the table's own facts ("triton_version", "candidate", ...).
      if (value.is_object() || value.is_array()) {
        reader.fail(name,
                    "is neither a size (a whole number) nor a fact about the table (a "
                    "string or number)");
      }
      table.about[name] = value_text(value);
      continue;
    }
    if (!value.is_object()) reader.fail(name, "must be an object: the configuration at this size");
    tuned_entry entry{.size = *size};
    for (const auto& [param, v] : value.items()) {
      const std::string where = fmt::format("{}.{}", name, param);
      if (param == time_key || param == default_key) {
        if (!v.is_number()) reader.fail(where, "must be a number of microseconds");
        (param == time_key ? entry.time_us : entry.default_time_us) = v.get<double>();
      } else if (param == interval_key) {
        if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number()) {
          reader.fail(where, "must be [low, high] in microseconds");
        }
        entry.interval_us = std::make_pair(v[0].get<double>(), v[1].get<double>());
      } else if (param == run_key) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
          reader.fail(where, "must be the number of the run that measured the entry");
        }
        entry.run_id = v.get<std::int64_t>();
      } else {
        if (v.is_object() || v.is_array() || v.is_null()) {
          reader.fail(where, "a param's value must be a string or a number");
        }
        entry.params[param] = value_text(v);
      }
    }
    table.entries.push_back(std::move(entry));
  }
  std::sort(table.entries.begin(), table.entries.end(),
            [](const tuned_entry& a, const tuned_entry& b) { return a.size < b.size; });
  for (std::size_t i = 1; i < table.entries.size(); ++i) {
    if (table.entries[i].size == table.entries[i - 1].size) {
      reader.fail(std::to_string(table.entries[i].size),
                  "appears twice (as \"16\" and \"016\", say); keep one entry per size");
    }
  }
  return table;
}

std::filesystem::path write_tuned_table(const std::filesystem::path& folder,
                                        const tuned_table& table) {
  json doc = json::object();
  for (const auto& e : table.entries) {
    json entry = json::object();
    for (const auto& [param, value] : e.params) {
      if (is_measurement(param)) {
        BLASTER_THROW("a param named {} would read back as a measurement", param);
      }
      entry[param] = value_json(value);
    }
    if (e.time_us) entry[std::string(time_key)] = *e.time_us;
    if (e.interval_us) {
      entry[std::string(interval_key)] = {e.interval_us->first, e.interval_us->second};
    }
    if (e.default_time_us) entry[std::string(default_key)] = *e.default_time_us;
    if (e.run_id) entry[std::string(run_key)] = *e.run_id;
    // Appended, not looked up: every key is new, and ordered_json's lookup is a linear search.
    doc.get_ref<json::object_t&>().emplace_back(std::to_string(e.size), std::move(entry));
  }
  for (const auto& [name, value] : table.about) {
    if (size_of_key(name)) BLASTER_THROW("a fact named {} would read back as a size", name);
    doc.get_ref<json::object_t&>().emplace_back(name, value);
  }
  std::filesystem::create_directories(folder);
  const auto path = folder / tuned_file_name(table.key);
  write_file_atomically(path, doc.dump(2) + "\n");
  return path;
}

}  // namespace blaster
