#include "tasks/task_spec.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "task_spec_fixture.hpp"
#include "tasks/input_generator.hpp"

namespace blaster {
namespace {

using namespace blaster::testing;

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

TEST_F(TaskSpecFile, AnInoutBufferIsDrawnAndCheckedAndAnUnknownRoleNamesTheThree) {
  json j = valid();
  j["buffers"]["x"]["role"] = "inout";
  j["cases"][1]["init"] = {{"x", {{"dist", "normal"}, {"std", 2}}}};  // drawn: a case may say how
  write(j.dump());
  const task_spec task = load_task(dir_);
  EXPECT_EQ(task.find_buffer("x")->role, buffer_role::inout);
  EXPECT_TRUE(is_drawn(buffer_role::inout) && is_checked(buffer_role::inout));
  EXPECT_FALSE(is_checked(buffer_role::input) || is_drawn(buffer_role::output));
  j["buffers"]["x"]["role"] = "in_place";
  write(j.dump());
  refused({"buffers.x.role", "\"in_place\"", "input, output, or inout"});
}

TEST_F(TaskSpecFile, DistinctValuesMustFitTheirRange) {
  json j = valid();
  j["buffers"]["x"]["init"] = {{"dist", "distinct"}, {"low", 0}, {"high", "N * M - 1"}};
  write(j.dump());
  EXPECT_EQ(load_task(dir_).find_buffer("x")->init.kind, "distinct");
  j["buffers"]["x"]["init"] = {{"dist", "distinct"}, {"low", 0}, {"high", 2}};
  write(j.dump());
  refused({"buffers.x.init", "distinct values do not fit in [0, 2]"});
}

// A token's experts: no two alike within a row, the buffer's last dimension in each case.
TEST_F(TaskSpecFile, DistinctRowsMustFitTheirRangeRowByRow) {
  json j = valid();
  j["buffers"]["x"]["dtype"] = "i32";
  j["buffers"]["x"]["init"] = {{"dist", "distinct_rows"}, {"low", 0}, {"high", "M - 1"}};
  write(j.dump());
  const task_spec task = load_task(dir_);
  const buffer_spec& x = *task.find_buffer("x");
  EXPECT_EQ(task.input_distribution(x, task.find_case("main")).row, 4);
  EXPECT_EQ(task.input_distribution(x, task.find_case("small")).row, 2);
  // N=8 rows of M=4: each a permutation of 0..3.
  const host_tensor drawn = generate_input(task, x, task.find_case("main"), 9);
  ASSERT_EQ(drawn.values.size(), 32U);
  for (std::size_t r = 0; r < 8; ++r) {
    const std::set<double> row(drawn.values.begin() + static_cast<std::ptrdiff_t>(4 * r),
                               drawn.values.begin() + static_cast<std::ptrdiff_t>(4 * r + 4));
    EXPECT_EQ(row, (std::set<double>{0, 1, 2, 3}));
  }
  j["buffers"]["x"]["init"] = {{"dist", "distinct_rows"}, {"low", 0}, {"high", 2}};
  write(j.dump());
  refused({"buffers.x.init", "in case main", "rows of 4 distinct values do not fit in [0, 2]"});
}

TEST_F(TaskSpecFile, ACaseMayNameItsOwnTimingMode) {
  json j = valid();
  j["timing"] = {{"mode", "hot"}};
  j["cases"][1]["mode"] = "graph";
  write(j.dump());
  const task_spec task = load_task(dir_);
  EXPECT_EQ(task.find_case("small").timing_mode, std::optional<timing_mode>(timing_mode::graph));
  EXPECT_FALSE(task.find_case("main").timing_mode.has_value());
  j["cases"][1]["mode"] = "warm";
  write(j.dump());
  refused({"cases[1].mode", "\"warm\"", "hot, cold, graph or single"});
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
