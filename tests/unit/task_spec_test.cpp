#include "tasks/task_spec.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "tasks/input_generator.hpp"

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
    // Every task folder is listed, in name order (the list grows as tasks are added).
    const std::string marker = "known tasks: ";
    const auto from = message.find(marker);
    ASSERT_NE(from, std::string::npos) << message;
    const auto to = message.find(')', from);
    std::vector<std::string> listed;
    std::stringstream names(message.substr(from + marker.size(), to - from - marker.size()));
    for (std::string name; std::getline(names, name, ',');) {
      listed.push_back(name.substr(name.find_first_not_of(' ')));
    }
    EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end())) << message;
    for (const char* task : {"gelu", "rmsnorm", "softmax", "layernorm", "cross_entropy"}) {
      EXPECT_NE(std::find(listed.begin(), listed.end(), task), listed.end()) << task;
    }
  }
}

TEST(TaskSpecRmsnorm, EdgeCasesAreAllPresent) {
  const task_spec task = load_task(BLASTER_SOURCE_DIR "/tasks/rmsnorm");
  std::vector<std::string> names;
  for (const auto& c : task.cases) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"canonical", "large", "odd", "single", "ragged",
                                             "wide", "deep"}));
  EXPECT_TRUE(task.find_case("large").large);
  EXPECT_FALSE(task.find_case("canonical").large);
  EXPECT_EQ(task.describe(task.find_case("single")), "B=1 C=1 H=1 W=1");
  EXPECT_EQ(task.elements(*task.find_buffer("x"), task.find_case("odd")), 3 * 17 * 31 * 7);
  EXPECT_THROW(static_cast<void>(task.find_case("nope")), input_error);
}

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

TEST_F(TaskSpecFile, DuplicateKeysAreRefusedWhereTheSecondIs) {
  write("{\n  \"name\": \"t\",\n  \"cases\": [],\n  \"name\": \"t\"\n}\n");
  refused({":4:3: duplicate key \"name\""});
}

TEST_F(TaskSpecFile, ANumberBeyondADoubleSaysWhere) {
  std::string text = valid().dump(1);
  text.replace(text.find("0.001"), 5, "1e999");
  write(text);
  const std::string message = refused({"1e999", "finite"});
  EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
}

TEST_F(TaskSpecFile, TheNameIsTheFolder) {
  json j = valid();
  j["name"] = "rmsnorm";
  write(j.dump());
  refused({"task.name", "\"rmsnorm\" is not the task's folder \"t\""});
}

TEST_F(TaskSpecFile, ANormalDistributionNeedsANonNegativeStd) {
  json j = valid();
  j["buffers"]["x"]["init"] = {{"dist", "normal"}, {"std", -1}};
  write(j.dump());
  refused({"buffers.x.init.std", "not negative"});
}

TEST_F(TaskSpecFile, BufferNamesAreIdentifiers) {
  json j = valid();
  j["buffers"]["y z"] = j["buffers"]["y"];
  j["buffers"].erase("y");
  write(j.dump());
  refused({"buffers.y z", "identifier"});
}

TEST_F(TaskSpecFile, ByteCountsThatOverflowAreRefused) {
  // 2^61 f64 elements are 2^64 bytes: the count fits an int64, its bytes do not.
  json j = valid();
  j["symbols"]["N"]["type"] = "i64";
  j["buffers"]["x"]["dtype"] = "f64";
  j["buffers"]["x"]["shape"] = json::array({"N"});
  j["cases"][0]["symbols"]["N"] = 2305843009213693952;
  write(j.dump());
  refused({"buffers.x.shape", "more bytes than an int64 holds"});
}

TEST_F(TaskSpecFile, ACaseCheckedOnEveryRunHasABoundedSize) {
  // 4 GB of buffers in a case every run checks on the host, three seeds over.
  json j = valid();
  j["cases"][1]["symbols"] = {{"N", 1000000}, {"M", 1000}};
  write(j.dump());
  refused({"cases.small", "mark it \"large\""});
  // Marked large, it is checked only when timed, and is accepted.
  j["cases"][1]["large"] = true;
  write(j.dump());
  EXPECT_EQ(load_task(dir_).find_case("small").large, true);
  // No case may exceed the bound for all cases, large or not: 10^12 elements of f32.
  j["cases"][1]["symbols"] = {{"N", 1000000}, {"M", 1000000}};
  write(j.dump());
  refused({"cases.small", "over the limit of 256 GiB"});
}

TEST_F(TaskSpecFile, ACaseMustFitTheDevicesMemory) {
  write(valid().dump());
  const task_spec task = load_task(dir_);
  // The canonical case: x and y of 8x4 f32 each, 256 bytes.
  EXPECT_NO_THROW(task.check_fits(task.canonical(), 256));
  try {
    task.check_fits(task.canonical(), 255);
    ADD_FAILURE() << "a case larger than the device was accepted";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("case main: its buffers hold 256 bytes, more than the "
                                         "device's 255 bytes"),
              std::string::npos)
        << e.what();
  }
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

// A case may draw an input its own way: large magnitudes, a mean far from zero.
TEST_F(TaskSpecFile, CaseInitOverridesTheBufferDistributionForThatCaseOnly) {
  json j = valid();
  j["cases"][1]["init"] = {{"x", {{"dist", "normal"}, {"mean", 50}, {"std", 0.5}}}};
  write(j.dump());
  const task_spec task = load_task(dir_);
  const buffer_spec& x = *task.find_buffer("x");
  const distribution small = task.input_distribution(x, task.find_case("small"));
  EXPECT_EQ(small.kind, "normal");
  EXPECT_DOUBLE_EQ(small.mean, 50.0);
  EXPECT_DOUBLE_EQ(small.stddev, 0.5);
  // The other case keeps the buffer's own distribution.
  const distribution main = task.input_distribution(x, task.find_case("main"));
  EXPECT_EQ(main.kind, "uniform");
  EXPECT_DOUBLE_EQ(main.low, -1.0);
  // And what is drawn follows the case: N=1, M=2 near 50 here, within [-1, 1) there.
  const host_tensor drawn = generate_input(task, x, task.find_case("small"), 7);
  ASSERT_EQ(drawn.values.size(), 2u);
  for (double v : drawn.values) EXPECT_NEAR(v, 50.0, 5.0);
  for (double v : generate_input(task, x, task.find_case("main"), 7).values) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST_F(TaskSpecFile, CaseInitNamingAnUnknownBuffer) {
  json j = valid();
  j["cases"][1]["init"] = {{"q", {{"dist", "normal"}}}};
  write(j.dump());
  refused({"cases[1].init.q", "unknown buffer \"q\"", "inputs: x"});
}

TEST_F(TaskSpecFile, CaseInitNamingAnOutput) {
  // Outputs are poisoned, never drawn: an override for one is a mistake worth naming.
  json j = valid();
  j["cases"][0]["init"] = {{"y", {{"dist", "normal"}}}};
  write(j.dump());
  refused({"cases[0].init.y", "an output buffer", "only inputs are drawn"});
}

TEST_F(TaskSpecFile, CaseInitWithAnUnknownDistribution) {
  json j = valid();
  j["cases"][1]["init"] = {{"x", {{"dist", "gaussian"}}}};
  write(j.dump());
  refused({"cases[1].init.x.dist", "\"gaussian\"", "known: normal"});
}

TEST_F(TaskSpecFile, CaseInitWithAKeyTheDistributionDoesNotTake) {
  json j = valid();
  j["cases"][1]["init"] = {{"x", {{"dist", "normal"}, {"low", 0}}}};
  write(j.dump());
  refused({"cases[1].init.x", "unknown key \"low\""});
}

TEST_F(TaskSpecFile, CaseInitThatIsNotAnObject) {
  json j = valid();
  j["cases"][1]["init"] = "wide";
  write(j.dump());
  refused({"cases[1].init", "must be an object"});
  j["cases"][1]["init"] = {{"x", 30}};
  write(j.dump());
  refused({"cases[1].init.x", "must be an object"});
}

TEST_F(TaskSpecFile, LargeMarksACaseAndDefaultsToFalse) {
  json j = valid();
  j["cases"][1]["large"] = true;
  write(j.dump());
  const task_spec task = load_task(dir_);
  EXPECT_TRUE(task.find_case("small").large);
  EXPECT_FALSE(task.find_case("main").large);
}

TEST_F(TaskSpecFile, LargeMustBeABoolean) {
  json j = valid();
  j["cases"][1]["large"] = "yes";
  write(j.dump());
  refused({"cases[1].large", "true or false"});
}

TEST_F(TaskSpecFile, TimingModeIsStoredAndOptional) {
  write(valid().dump());
  EXPECT_FALSE(load_task(dir_).timing_mode.has_value());
  for (const auto& mode : timing_modes()) {
    json j = valid();
    j["timing"] = {{"mode", mode.name}};
    write(j.dump());
    const task_spec task = load_task(dir_);
    ASSERT_TRUE(task.timing_mode.has_value()) << mode.name;
    EXPECT_EQ(*task.timing_mode, mode.mode);
  }
}

TEST_F(TaskSpecFile, TimingModeThatIsNotOne) {
  json j = valid();
  j["timing"] = {{"mode", "warm"}};
  write(j.dump());
  refused({"timing.mode", "\"warm\"", "hot, cold, graph or single"});
}

TEST_F(TaskSpecFile, TimingWithAnUnknownKeyOrNoMode) {
  json j = valid();
  j["timing"] = {{"mode", "hot"}, {"inner", 10}};
  write(j.dump());
  refused({"timing", "unknown key \"inner\""});
  j["timing"] = json::object();
  write(j.dump());
  refused({"timing", "missing \"mode\""});
  j["timing"] = "graph";
  write(j.dump());
  refused({"timing", "must be an object"});
}

// Class indices: an int_range whose bound reads the case's sizes.
TEST_F(TaskSpecFile, IntRangeBoundsMayBeExpressionsOverTheSizes) {
  json j = valid();
  j["buffers"]["t"] = {{"dtype", "i64"},
                       {"shape", {"N"}},
                       {"role", "input"},
                       {"init", {{"dist", "int_range"}, {"low", 0}, {"high", "N - 1"}}}};
  write(j.dump());
  const task_spec task = load_task(dir_);
  const buffer_spec& t = *task.find_buffer("t");
  EXPECT_DOUBLE_EQ(task.input_distribution(t, task.find_case("main")).high, 7.0);
  EXPECT_DOUBLE_EQ(task.input_distribution(t, task.find_case("small")).high, 0.0);
  EXPECT_FALSE(task.input_distribution(t, task.find_case("main")).high_bound.has_value());
  // Drawn per case, every integer of [0, N-1] and nothing else: i64 holds them exactly.
  const host_tensor drawn = generate_input(task, t, task.find_case("main"), 3);
  ASSERT_EQ(drawn.values.size(), 8u);
  EXPECT_EQ(drawn.bytes.size(), 8u * 8u);
  for (double v : drawn.values) {
    EXPECT_EQ(v, std::floor(v));
    EXPECT_GE(v, 0.0);
    EXPECT_LE(v, 7.0);
  }
  for (double v : generate_input(task, t, task.find_case("small"), 3).values) EXPECT_EQ(v, 0.0);
  // Unresolved bounds cannot be drawn from directly.
  EXPECT_THROW(static_cast<void>(generate_input(t, 4, 1)), error);
}

TEST_F(TaskSpecFile, IntRangeBoundBelowLowInSomeCase) {
  // "N - 2" is fine for N=8 but is -1 for the case with N=1: refused at load, naming the case.
  json j = valid();
  j["buffers"]["x"]["init"] = {{"dist", "int_range"}, {"low", 0}, {"high", "N - 2"}};
  write(j.dump());
  refused({"buffers.x.init", "in case small", "above \"high\" -1"});
  // The same through a case's own override.
  j = valid();
  j["cases"][1]["init"] = {{"x", {{"dist", "int_range"}, {"low", "M"}, {"high", 1}}}};
  write(j.dump());
  refused({"cases[1].init.x", "in case small"});
}

TEST_F(TaskSpecFile, IntRangeBoundWithAnUnknownSymbolOrAFraction) {
  json j = valid();
  j["buffers"]["x"]["init"] = {{"dist", "int_range"}, {"low", 0}, {"high", "K - 1"}};
  write(j.dump());
  refused({"buffers.x.init", "unknown symbol 'K'"});
  j["buffers"]["x"]["init"] = {{"dist", "int_range"}, {"low", 0.5}, {"high", 3}};
  write(j.dump());
  refused({"buffers.x.init.low", "integer"});
  j["buffers"]["x"]["init"] = {{"dist", "int_range"}, {"low", 4}, {"high", 3}};
  write(j.dump());
  refused({"buffers.x.init", "\"low\" must not be above \"high\""});
}

// The core10 tasks that use these features say so in their task.json.
TEST(TaskSpecCore10, LaunchBoundTasksAskForGraphTimingAndMarkTheirLargeCase) {
  for (const char* name : {"softmax", "cross_entropy"}) {
    const task_spec task = load_task(std::string(BLASTER_SOURCE_DIR "/tasks/") + name);
    ASSERT_TRUE(task.timing_mode.has_value()) << name;
    EXPECT_EQ(*task.timing_mode, timing_mode::graph) << name;
    EXPECT_TRUE(task.find_case("large").large) << name;
    EXPECT_FALSE(task.canonical().large) << name;
  }
  const task_spec layernorm = load_task(BLASTER_SOURCE_DIR "/tasks/layernorm");
  EXPECT_EQ(layernorm.timing_mode, std::optional<timing_mode>(timing_mode::hot));
  EXPECT_EQ(layernorm.describe(layernorm.canonical()), "B=16 C=64 H=256 W=256");
}

TEST(TaskSpecCore10, CrossEntropyTargetsCoverEveryClassOfEachCase) {
  const task_spec task = load_task(BLASTER_SOURCE_DIR "/tasks/cross_entropy");
  const buffer_spec& targets = *task.find_buffer("targets");
  EXPECT_EQ(targets.type, dtype::i64);
  for (const auto& c : task.cases) {
    const distribution d = task.input_distribution(targets, c);
    EXPECT_EQ(d.kind, "int_range") << c.name;
    EXPECT_EQ(d.low, 0.0) << c.name;
    EXPECT_EQ(d.high, task.value(c, "C") - 1) << c.name;
  }
  // A small case drawn for real: every target a class of that case.
  const task_case& odd = task.find_case("odd");
  std::set<double> seen;
  for (double v : generate_input(task, targets, odd, 11).values) {
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, task.value(odd, "C"));
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(task.value(odd, "C")));
}

TEST(TaskSpecCore10, OverridesMakeTheirCasesHard) {
  // The cases that exist to defeat a missing max subtraction or a one-pass variance really draw
  // from the far-off distribution, and the canonical case does not.
  const task_spec softmax = load_task(BLASTER_SOURCE_DIR "/tasks/softmax");
  const buffer_spec& x = *softmax.find_buffer("x");
  EXPECT_DOUBLE_EQ(softmax.input_distribution(x, softmax.find_case("shifted")).mean, 100.0);
  EXPECT_DOUBLE_EQ(softmax.input_distribution(x, softmax.find_case("sunk")).mean, -120.0);
  EXPECT_DOUBLE_EQ(softmax.input_distribution(x, softmax.canonical()).mean, 0.0);
  const task_spec layernorm = load_task(BLASTER_SOURCE_DIR "/tasks/layernorm");
  const buffer_spec& lx = *layernorm.find_buffer("x");
  EXPECT_DOUBLE_EQ(layernorm.input_distribution(lx, layernorm.find_case("far_mean")).mean, 1000.0);
  EXPECT_DOUBLE_EQ(layernorm.input_distribution(lx, layernorm.canonical()).mean, 0.0);
  const task_spec ce = load_task(BLASTER_SOURCE_DIR "/tasks/cross_entropy");
  const buffer_spec& logits = *ce.find_buffer("logits");
  EXPECT_EQ(ce.input_distribution(logits, ce.canonical()).kind, "heavy_tailed");
  EXPECT_EQ(ce.input_distribution(logits, ce.find_case("randn")).kind, "normal");
}

TEST_F(TaskSpecFile, MissingTaskFile) {
  // No task.json written: the message names the path the user has to create.
  refused({"no such task file"});
}

}  // namespace
}  // namespace blaster
