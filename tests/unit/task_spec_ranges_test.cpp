// The symbol ranges of task.json: read, and each mistake refused at its key with the fix.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "task_spec_fixture.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

using namespace blaster::testing;

class TaskSpecRanges : public TaskSpecFile {
 protected:
  // The fixture's task with N drawn from [1, 64] and M from [2, 8] in steps of 2 (its cases have
  // N = 8, 1 and M = 4, 2), drawn cases of at most 1 MiB.
  static json ranged() {
    json j = valid();
    j["symbols"]["N"]["range"] = {{"min", 1}, {"max", 64}};
    j["symbols"]["M"]["range"] = {{"min", 2}, {"max", 8}, {"multiple", 2}};
    j["drawn"] = {{"max_bytes", 1 << 20}};
    return j;
  }
};

TEST_F(TaskSpecRanges, RangesAreRead) {
  json j = ranged();
  j["symbols"]["M"]["range"]["max"] = "4 * N";  // a bound may read another ranged symbol
  write(j.dump());
  const task_spec task = load_task(dir_);
  EXPECT_EQ(task.drawn_max_bytes, 1 << 20);
  const symbol_spec* n = task.find_symbol("N");
  ASSERT_TRUE(n->range.has_value());
  EXPECT_EQ(n->range->min.text(), "1");
  EXPECT_EQ(n->range->max.text(), "64");
  EXPECT_FALSE(n->range->multiple.has_value());
  const symbol_spec* m = task.find_symbol("M");
  EXPECT_EQ(m->range->max.evaluate({{"N", 3}}), 12);
  EXPECT_EQ(m->range->multiple->text(), "2");
  EXPECT_FALSE(task.find_symbol("eps")->range.has_value());
}

TEST_F(TaskSpecRanges, ATaskWithoutRangesDrawsNothingAndLoads) {
  write(valid().dump());
  EXPECT_EQ(load_task(dir_).drawn_max_bytes, 0);
}

TEST_F(TaskSpecRanges, ARangeIsForIntegerSymbols) {
  json j = ranged();
  j["symbols"]["eps"]["range"] = {{"min", 0}, {"max", 1}};
  write(j.dump());
  refused({"symbols.eps.range", "a range is for integer symbols", "f32"});
}

TEST_F(TaskSpecRanges, ARangeNeedsBothBoundsInOrder) {
  json j = ranged();
  j["symbols"]["N"]["range"].erase("max");
  write(j.dump());
  refused({"symbols.N.range", "missing \"max\""});
  j = ranged();
  j["symbols"]["N"]["range"] = {{"min", 65}, {"max", 64}};
  write(j.dump());
  refused({"symbols.N.range", "\"min\" 65 is above \"max\" 64; swap them"});
  j = ranged();
  j["symbols"]["N"]["range"]["min"] = -1;
  write(j.dump());
  refused({"symbols.N.range.min", "an integer of at least 0"});
  j = ranged();
  j["symbols"]["N"]["range"]["max"] = 6.5;
  write(j.dump());
  refused({"symbols.N.range.max", "an integer of at least 0"});
  j = ranged();
  j["symbols"]["N"]["range"]["max"] = "N +";
  write(j.dump());
  refused({"symbols.N.range.max"});
}

TEST_F(TaskSpecRanges, ARangesMultipleIsPositive) {
  json j = ranged();
  j["symbols"]["M"]["range"]["multiple"] = 0;
  write(j.dump());
  refused({"symbols.M.range.multiple", "an integer of at least 1"});
}

TEST_F(TaskSpecRanges, ARangeHasOnlyItsKeys) {
  json j = ranged();
  j["symbols"]["N"]["range"]["step"] = 2;
  write(j.dump());
  refused({"symbols.N.range", "unknown key \"step\"", "multiple"});
  j = ranged();
  j["symbols"]["N"]["range"] = json::array({1, 64});
  write(j.dump());
  refused({"symbols.N.range", "must be an object"});
}

TEST_F(TaskSpecRanges, RangesComeWithTheDrawnCasesCap) {
  json j = ranged();
  j.erase("drawn");
  write(j.dump());
  refused({"task", "missing \"drawn\"", "max_bytes"});
  j = valid();
  j["drawn"] = {{"max_bytes", 1 << 20}};
  write(j.dump());
  refused({"drawn", "no symbol has a \"range\""});
  j = ranged();
  j["drawn"]["max_bytes"] = 0;
  write(j.dump());
  refused({"drawn.max_bytes", "positive integer"});
  j = ranged();
  j["drawn"]["max_bytes"] = std::int64_t{3} << 30;
  write(j.dump());
  refused({"drawn.max_bytes", "over the 2 GiB"});
  j = ranged();
  j["drawn"]["bytes"] = 5;
  write(j.dump());
  refused({"drawn", "unknown key \"bytes\""});
}

TEST_F(TaskSpecRanges, ASizeWithoutADefaultNeedsARange) {
  json j = ranged();
  j["symbols"]["N"].erase("range");
  write(j.dump());
  refused({"symbols.N", "neither a default \"value\" nor a \"range\""});
  // With a default, a symbol without a range keeps it in drawn cases: accepted.
  j["symbols"]["N"]["value"] = 8;
  write(j.dump());
  EXPECT_NO_THROW(static_cast<void>(load_task(dir_)));
}

TEST_F(TaskSpecRanges, BoundsReadIntegerSymbols) {
  json j = ranged();
  j["symbols"]["M"]["range"]["max"] = "K";
  write(j.dump());
  refused({"symbols.M.range.max", "reads K, which is not an integer symbol"});
  j["symbols"]["M"]["range"]["max"] = "eps";
  write(j.dump());
  refused({"symbols.M.range.max", "reads eps"});
  j["symbols"]["M"]["range"]["max"] = "2 * M";
  write(j.dump());
  refused({"symbols.M.range.max", "reads M itself"});
}

TEST_F(TaskSpecRanges, BoundsThatReadEachOtherInARingAreRefused) {
  json j = ranged();
  j["symbols"]["N"]["range"]["max"] = "16 * M";
  j["symbols"]["M"]["range"]["max"] = "N";
  write(j.dump());
  refused({"symbols.N.range", "read each other in a ring (N -> M -> N)"});
}

TEST_F(TaskSpecRanges, EveryCaseLiesWithinTheRanges) {
  json j = ranged();
  j["symbols"]["N"]["range"]["max"] = 7;  // the case main has N = 8
  write(j.dump());
  refused({"symbols.N.range", "case main has N = 8, outside the range ([1, 7])", "widen"});
  j = ranged();
  j["cases"][1]["symbols"]["M"] = 3;  // not a multiple of 2
  write(j.dump());
  refused({"symbols.M.range", "case small has M = 3", "multiples of 2"});
  // A bound read in each case: M at most N allows M = 4 with N = 8 but not M = 2 with N = 1.
  j = ranged();
  j["symbols"]["M"]["range"]["max"] = "N";
  write(j.dump());
  refused({"symbols.M.range", "case small has M = 2, outside the range ([2, 1]"});
}

TEST_F(TaskSpecRanges, TheSmallestAllowedCaseMustFit) {
  // The smallest case holds N = 1, M = 2: x and y of two f32 each, 16 bytes.
  json j = ranged();
  j["drawn"]["max_bytes"] = 15;
  write(j.dump());
  refused({"drawn.max_bytes", "the smallest allowed case (N=1 M=2)", "16 bytes", "max_bytes"});
  j["drawn"]["max_bytes"] = 16;
  write(j.dump());
  EXPECT_NO_THROW(static_cast<void>(load_task(dir_)));
}

TEST_F(TaskSpecRanges, ARangeWithNoMultipleInsideIsRefused) {
  json j = ranged();
  j["symbols"]["M"]["range"] = {{"min", 5}, {"max", 7}, {"multiple", 8}};
  j["symbols"]["M"]["value"] = 4;
  j["cases"][1]["symbols"].erase("M");
  write(j.dump());
  // The cases' M = 4 lies outside first; with cases inside, the empty range itself is named.
  refused({"symbols.M.range", "outside the range"});
  j["symbols"]["M"]["range"] = {{"min", 5}, {"max", "N + 6"}, {"multiple", 8}};
  j["symbols"]["M"].erase("value");
  j["cases"][0]["symbols"]["M"] = 8;
  j["cases"][1]["symbols"] = {{"N", 2}, {"M", 8}};
  write(j.dump());
  refused({"symbols", "the smallest allowed case", "no multiple of 8 lies in [5, 7]"});
}

TEST_F(TaskSpecRanges, ACaseNameMayNotPassForADrawnCase) {
  json j = ranged();
  j["cases"][1]["name"] = "drawn:1:0";
  write(j.dump());
  refused({"cases[1].name", "begins with \"drawn:\""});
}

}  // namespace
}  // namespace blaster
