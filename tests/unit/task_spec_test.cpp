#include "tasks/task_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "task_spec_fixture.hpp"

namespace blaster {
namespace {

using namespace blaster::testing;

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

TEST(TaskSpecDtype, TheDataDtypeIsTheFirstFloatingInputsNotAnIndexs) {
  EXPECT_EQ(load_task(BLASTER_SOURCE_DIR "/tasks/rmsnorm").data_dtype(), "f16");
  // rope's first input is its i32 positions, embedding_gather's its i32 ids: both compute bf16.
  EXPECT_EQ(load_task(BLASTER_SOURCE_DIR "/tasks/rope").data_dtype(), "bf16");
  EXPECT_EQ(load_task(BLASTER_SOURCE_DIR "/tasks/embedding_gather").data_dtype(), "bf16");
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

// Quantized data is stored in buffers; its scales are buffers too, never symbols.
TEST_F(TaskSpecFile, QuantizationFormatsAreForBuffersOnly) {
  json j = valid();
  j["buffers"]["y"]["dtype"] = "fp8_e4m3";
  j["buffers"]["x"]["dtype"] = "i8";
  write(j.dump());
  const task_spec task = load_task(dir_);
  EXPECT_EQ(task.find_buffer("y")->type, dtype::fp8_e4m3);
  EXPECT_EQ(task.buffer_bytes(*task.find_buffer("y"), task.canonical()), 8 * 4);
  j = valid();
  j["symbols"]["eps"]["type"] = "fp8_e5m2";
  write(j.dump());
  refused({"symbols.eps.type", "fp8_e5m2 is a storage format for buffers"});
}

TEST_F(TaskSpecFile, UnknownBufferRole) {
  json j = valid();
  j["buffers"]["y"]["role"] = "scratch";
  write(j.dump());
  refused({"buffers.y.role", "\"scratch\""});
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

}  // namespace
}  // namespace blaster
