#pragma once

// Tuned launch configurations in the table format inference engines ship
// (../shared/formats/tuned-configs.md): one JSON file per task, shape, device and toolchain, named
// by its `key=value` pairs, whose entries are keyed by the size (tokens, M) each was tuned at.
// blaster's tables hold its own params and, beside each configuration, what was measured there;
// an engine's table reads the same way, without the measurements.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace blaster {

// The best configuration at one size.
struct tuned_entry {
  std::int64_t size = 0;
  std::map<std::string, std::string> params{};  // param name -> value, as the plan spells it
  // [microseconds] What blaster measured there; absent in an engine's table.
  std::optional<double> time_us{};
  std::optional<std::pair<double, double>> interval_us{};  // the time's 95% interval
  std::optional<double> default_time_us{};  // the candidate's default configuration, same run
  std::optional<std::int64_t> run_id{};     // the run that measured all three
};

struct tuned_table {
  // The file name's pairs, in order: the shape's keys, then device_name, dtype, the toolchain.
  std::vector<std::pair<std::string, std::string>> key;
  // Top-level entries that are not sizes: the candidate and the evidence's digest for blaster's
  // tables, "triton_version" and the like for an engine's.
  std::map<std::string, std::string> about;
  std::vector<tuned_entry> entries;  // ascending size, one per size

  // The entry an engine would pick for `size`: the nearest size, the smaller one on a tie.
  // Null when the table is empty.
  [[nodiscard]] const tuned_entry* nearest(std::int64_t size) const;
  // The value of a key of the file name, or empty.
  [[nodiscard]] std::string key_value(std::string_view name) const;
  // Adds `entry` in its place by size, in place of an entry of the same size.
  void put(tuned_entry entry);
};

// The tuned table entry a variant was chosen by.
struct tuned_choice {
  std::string file;         // the table's path as found
  std::string sha256;       // its bytes, in the CAS where the run stored them
  std::string size_symbol;  // the task's symbol the entries are keyed by
  std::int64_t size = 0;    // the entry's size: the nearest to the case's
  std::map<std::string, std::string> params{};
  // The toolchain pairs of the table's name that differ from this run's ("nvrtc: 13.0, here
  // 13.1"): the entry was tuned with another compiler or driver.
  std::vector<std::string> differences{};
};

nlohmann::json to_json(const tuned_choice& choice);
tuned_choice tuned_choice_from_json(const nlohmann::json& j);

// A CUDA device name as the file names spell it: "NVIDIA H200" -> "NVIDIA_H200".
std::string device_name_key(std::string_view cuda_name);

// "E=8,N=14336,device_name=NVIDIA_H200.json" from its pairs, and back. A value may hold commas
// inside brackets ("block_shape=[128, 128]"). Parsing throws an input_error naming the file.
std::string tuned_file_name(const std::vector<std::pair<std::string, std::string>>& key);
std::vector<std::pair<std::string, std::string>> parse_tuned_file_name(std::string_view name);

// Reads a table, its key from the file name. Errors name the file and the entry.
tuned_table read_tuned_table(const std::filesystem::path& file);
// Writes the table into `folder` under its file name, atomically; returns the path.
std::filesystem::path write_tuned_table(const std::filesystem::path& folder,
                                        const tuned_table& table);

}  // namespace blaster
