#pragma once

// The fixture of the task.json tests: a small valid task, written into a folder of its own, that
// each test breaks in one place.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "tasks/task_spec.hpp"

namespace blaster::testing {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// Each test writes one task.json into its own folder and expects load_task to refuse it.
// Each test writes one task.json into its own folder and expects load_task to refuse it.
class TaskSpecFile : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    // The folder is the task's name, which valid() says is "t".
    dir_ = fs::temp_directory_path() /
           ("blaster-task-spec-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)) /
           "t";
    fs::remove_all(dir_.parent_path());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  // A small valid task that each test breaks in one place.
  static json valid() {
    return json::parse(R"({
      "name": "t",
      "symbols": {"N": {"type": "i32"}, "M": {"type": "i32", "value": 4},
                  "eps": {"type": "f32", "value": 1e-5}},
      "buffers": {
        "x": {"dtype": "f32", "shape": ["N", "M"], "role": "input",
              "init": {"dist": "uniform", "low": -1, "high": 1}},
        "y": {"dtype": "f32", "shape": ["N", "M"], "role": "output"}
      },
      "tolerance": {"atol": 0.001, "rtol": 0.001},
      "roofline": {"bytes": "8*N*M"},
      "cases": [
        {"name": "main", "canonical": true, "symbols": {"N": 8}},
        {"name": "small", "symbols": {"N": 1, "M": 2}}
      ]
    })");
  }

  void write(std::string_view text) const {
    std::ofstream out(file(), std::ios::binary | std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good());
  }

  [[nodiscard]] std::string file() const { return (dir_ / "task.json").string(); }

  // The message load_task throws, after checking it names the file and each of `parts`.
  std::string refused(std::initializer_list<std::string_view> parts) const {
    std::string message;
    try {
      static_cast<void>(load_task(dir_));
      ADD_FAILURE() << "load_task accepted it";
      return {};
    } catch (const input_error& e) {
      message = e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an input_error: " << e.what();
      return {};
    }
    EXPECT_NE(message.find(file()), std::string::npos) << message;
    for (const auto part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
    return message;
  }

  fs::path dir_;
};

}  // namespace blaster::testing
