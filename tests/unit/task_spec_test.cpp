#include "tasks/task_spec.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

TEST(TaskSpecRmsnorm, CanonicalCaseIsKernelBenchShape) {
  const task_spec task = load_task(BLASTER_SOURCE_DIR "/tasks/rmsnorm");
  EXPECT_EQ(task.name, "rmsnorm");
  EXPECT_EQ(task.canonical_case, "canonical");
  const task_case& c = task.canonical();
  EXPECT_EQ(task.value(c, "B"), 16);
  EXPECT_EQ(task.value(c, "C"), 64);
  EXPECT_EQ(task.value(c, "H"), 256);
  EXPECT_EQ(task.value(c, "W"), 256);
  // eps comes from the symbol's default, and stays out of the integer table.
  EXPECT_DOUBLE_EQ(task.value(c, "eps"), 1e-5);
  EXPECT_FALSE(task.integer_symbols(c).contains("eps"));

  const buffer_spec* x = task.find_buffer("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->type, dtype::f16);
  EXPECT_EQ(x->role, buffer_role::input);
  EXPECT_EQ(task.shape(*x, c), (std::vector<std::int64_t>{16, 64, 256, 256}));
  EXPECT_EQ(task.elements(*x, c), 67108864);
  ASSERT_NE(task.find_buffer("out"), nullptr);
  EXPECT_EQ(task.find_buffer("out")->role, buffer_role::output);
  EXPECT_EQ(task.find_buffer("missing"), nullptr);

  // Read x once and write out once, two bytes each: the roofline's fewest bytes.
  EXPECT_EQ(task.bytes.evaluate(task.integer_symbols(c)), 268435456);
  EXPECT_EQ(task.describe(c), "B=16 C=64 H=256 W=256");
  EXPECT_DOUBLE_EQ(task.tol.atol, 0.005);
  EXPECT_DOUBLE_EQ(task.tol.rtol, 0.01);
}

TEST(TaskSpecRmsnorm, UnknownTaskListsTheKnownOnes) {
  // A typo in --task gets the list of tasks next to the one it missed.
  try {
    static_cast<void>(load_task(BLASTER_SOURCE_DIR "/tasks/rmsnrom"));
    FAIL() << "load_task found a task that does not exist";
  } catch (const input_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(BLASTER_SOURCE_DIR "/tasks/rmsnrom/task.json"), std::string::npos)
        << message;
    // Every task folder is listed, in name order.
    EXPECT_NE(message.find("known tasks: gelu, newgelu, relu, rmsnorm, sum_dim1"),
              std::string::npos)
        << message;
  }
}

TEST(TaskSpecRmsnorm, EdgeCasesAreAllPresent) {
  const task_spec task = load_task(BLASTER_SOURCE_DIR "/tasks/rmsnorm");
  std::vector<std::string> names;
  for (const auto& c : task.cases) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"canonical", "odd", "single", "ragged", "wide", "deep"}));
  EXPECT_EQ(task.describe(task.find_case("single")), "B=1 C=1 H=1 W=1");
  EXPECT_EQ(task.elements(*task.find_buffer("x"), task.find_case("odd")), 3 * 17 * 31 * 7);
  EXPECT_THROW(static_cast<void>(task.find_case("nope")), input_error);
}

// Each test writes one task.json into its own folder and expects load_task to refuse it.
class TaskSpecFile : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("blaster-task-spec-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

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

TEST_F(TaskSpecFile, TheValidBaseLoads) {
  // Otherwise every refusal below could come from the base rather than the one change.
  write(valid().dump());
  const task_spec task = load_task(dir_);
  EXPECT_EQ(task.canonical_case, "main");
  EXPECT_EQ(task.describe(task.find_case("main")), "N=8 M=4");
  EXPECT_EQ(task.describe(task.find_case("small")), "N=1 M=2");
  EXPECT_EQ(task.tol.profile, "custom");
  EXPECT_EQ(task.title, "t");
  EXPECT_EQ(task.find_buffer("x")->init.kind, "uniform");
  EXPECT_EQ(task.bytes.evaluate(task.integer_symbols(task.canonical())), 8 * 8 * 4);
}

TEST_F(TaskSpecFile, InvalidJsonSaysWhere) {
  write("{\n  \"name\": \"t\",\n}\n");
  refused({"invalid JSON", "line 3"});
}

TEST_F(TaskSpecFile, UnknownTopLevelKey) {
  json j = valid();
  j["colour"] = "blue";
  write(j.dump());
  refused({"task: unknown key \"colour\""});
}

TEST_F(TaskSpecFile, UnknownDtype) {
  json j = valid();
  j["buffers"]["x"]["dtype"] = "f17";
  write(j.dump());
  refused({"buffers.x.dtype", "\"f17\""});
}

TEST_F(TaskSpecFile, UnknownBufferRole) {
  json j = valid();
  j["buffers"]["y"]["role"] = "inout";
  write(j.dump());
  refused({"buffers.y.role", "\"inout\""});
}

TEST_F(TaskSpecFile, CaseWithUnknownSymbol) {
  json j = valid();
  j["cases"][1]["symbols"]["Q"] = 3;
  write(j.dump());
  refused({"cases[1].symbols", "\"Q\""});
}

TEST_F(TaskSpecFile, CaseMissingSymbolWithoutDefault) {
  // N has no default; M does, so only N is missing.
  json j = valid();
  j["cases"][1]["symbols"].erase("N");
  write(j.dump());
  const std::string message = refused({"cases[1]", "symbol N"});
  EXPECT_EQ(message.find("symbol M"), std::string::npos) << message;
}

TEST_F(TaskSpecFile, TwoCanonicalCases) {
  json j = valid();
  j["cases"][1]["canonical"] = true;
  write(j.dump());
  refused({"cases[1]", "canonical"});
}

TEST_F(TaskSpecFile, NegativeSize) {
  json j = valid();
  j["cases"][0]["symbols"]["N"] = -8;
  write(j.dump());
  refused({"cases[0].symbols.N", "non-negative integer"});
}

TEST_F(TaskSpecFile, NonIntegerSize) {
  json j = valid();
  j["cases"][1]["symbols"]["M"] = 2.5;
  write(j.dump());
  refused({"cases[1].symbols.M", "non-negative integer"});
}

TEST_F(TaskSpecFile, FloatSymbolMayTakeAFraction) {
  // The integer rule is for sizes only: eps is a float and may be any number.
  json j = valid();
  j["cases"][1]["symbols"]["eps"] = 0.25;
  write(j.dump());
  const task_spec task = load_task(dir_);
  EXPECT_DOUBLE_EQ(task.value(task.find_case("small"), "eps"), 0.25);
}

TEST_F(TaskSpecFile, NonIntegerDefaultSize) {
  // A default is a size like any other: M = 2.5 would silently become 2 in every shape.
  json j = valid();
  j["symbols"]["M"]["value"] = 2.5;
  write(j.dump());
  refused({"symbols.M", "integer"});
}

TEST_F(TaskSpecFile, ShapeExpressionWithUnknownSymbol) {
  json j = valid();
  j["buffers"]["x"]["shape"][1] = "N*Q";
  write(j.dump());
  refused({"buffers.x.shape[1]", "unknown symbol 'Q'"});
}

TEST_F(TaskSpecFile, WrongJsonTypeOfAnOptionalKey) {
  // "canonical" must be true or false; a string is the user's mistake, not a crash.
  json j = valid();
  j["cases"][1]["canonical"] = "yes";
  write(j.dump());
  refused({"cases[1]", "canonical"});
}

TEST_F(TaskSpecFile, WrongJsonTypeOfASection) {
  json j = valid();
  j["tolerance"] = "tight";
  write(j.dump());
  refused({"tolerance"});
}

TEST_F(TaskSpecFile, MissingTaskFile) {
  // No task.json written: the message names the path the user has to create.
  refused({"no such task file"});
}

}  // namespace
}  // namespace blaster
