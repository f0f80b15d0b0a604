// Cases drawn from the tasks' symbol ranges: the same for a seed, awkward against every
// power-of-two block, within the ranges and the memory cap, and rebuilt from their names.
#include "tasks/drawn_cases.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tasks/detail/symbol_ranges.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

std::vector<task_spec> every_task() {
  std::vector<task_spec> tasks;
  for (const auto& entry : fs::directory_iterator(fs::path(BLASTER_SOURCE_DIR) / "tasks")) {
    if (fs::exists(entry.path() / "task.json")) tasks.push_back(load_task(entry.path()));
  }
  std::sort(tasks.begin(), tasks.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return tasks;
}

// The tasks are loaded once: each test walks all of them over many seeds.
const std::vector<task_spec>& tasks() {
  static const std::vector<task_spec> loaded = every_task();
  return loaded;
}

std::int64_t value_of(const task_spec& task, const task_case& c, const std::string& symbol) {
  return static_cast<std::int64_t>(task.value(c, symbol));
}

// Ranged symbols whose bounds read no other ranged symbol: those the drawing aims at.
std::vector<const symbol_spec*> free_symbols(const task_spec& task) {
  std::vector<const symbol_spec*> free;
  for (const auto& s : task.symbols) {
    if (s.range && detail::ranged_reads(task, *s.range).empty()) free.push_back(&s);
  }
  return free;
}

detail::allowed_values allowed_alone(const task_spec& task, const symbol_spec& s) {
  symbol_table fixed;
  for (const auto& t : task.symbols) {
    if (!is_floating(t.type) && t.value) fixed[t.name] = static_cast<std::int64_t>(*t.value);
  }
  return detail::allowed(*s.range, fixed);
}

TEST(DrawnCases, EveryTaskStatesRanges) {
  // core10's ten and the infer suite's twelve: a task without ranges would draw nothing.
  ASSERT_GE(tasks().size(), 22U);
  for (const auto& task : tasks()) {
    EXPECT_GT(task.drawn_max_bytes, 0) << task.name;
    EXPECT_FALSE(free_symbols(task).empty()) << task.name;
  }
}

TEST(DrawnCases, TheSameSeedDrawsTheSameSetAndAnotherSeedAnother) {
  for (const auto& task : tasks()) {
    const auto first = draw_cases(task, 1234);
    const auto again = draw_cases(task, 1234);
    const auto other = draw_cases(task, 1235);
    ASSERT_FALSE(first.empty()) << task.name;
    ASSERT_EQ(first.size(), again.size()) << task.name;
    for (std::size_t k = 0; k < first.size(); ++k) {
      EXPECT_EQ(first[k].name, fmt::format("drawn:1234:{}", k)) << task.name;
      EXPECT_EQ(first[k].name, again[k].name) << task.name;
      EXPECT_EQ(first[k].values, again[k].values) << task.name << " " << first[k].name;
      EXPECT_EQ(first[k].note, again[k].note) << task.name;
    }
    std::set<std::map<std::string, double, std::less<>>> shapes;
    std::set<std::map<std::string, double, std::less<>>> others;
    for (const auto& c : first) shapes.insert(c.values);
    for (const auto& c : other) others.insert(c.values);
    EXPECT_NE(shapes, others) << task.name << ": seeds 1234 and 1235 drew the same shapes";
    // No two cases of a set are alike.
    EXPECT_EQ(shapes.size(), first.size()) << task.name;
  }
}

TEST(DrawnCases, TwoTasksOfOneFormDrawDifferentShapesFromOneSeed) {
  // relu and gelu declare the same symbols and ranges: one run must not test both on one set.
  const auto find = [](const char* name) {
    return *std::find_if(tasks().begin(), tasks().end(),
                         [&](const task_spec& t) { return t.name == name; });
  };
  const auto relu = draw_cases(find("relu"), 77);
  const auto gelu = draw_cases(find("gelu"), 77);
  std::set<std::map<std::string, double, std::less<>>> a;
  std::set<std::map<std::string, double, std::less<>>> b;
  for (const auto& c : relu) a.insert(c.values);
  for (const auto& c : gelu) b.insert(c.values);
  EXPECT_NE(a, b);
}

TEST(DrawnCases, EveryAwkwardSizeIsDrawnForEverySymbol) {
  // For every symbol a task draws freely, on every seed: its least and its most, 1, 31 and 33
  // (times its multiple) where the range holds them, a size in the upper quarter below 1024
  // (768 to 1023: sum_dim1's off-by-one reads the next row there) where the range reaches it, and
  // one in the upper quarter below the largest power of two the range reaches.
  for (const auto& task : tasks()) {
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      const auto cases = draw_cases(task, seed * 7919 + 3);
      for (const symbol_spec* s : free_symbols(task)) {
        const detail::allowed_values a = allowed_alone(task, *s);
        std::set<std::int64_t> values;
        for (const auto& c : cases) values.insert(value_of(task, c, s->name));
        const std::string where = fmt::format("{} {} seed {}", task.name, s->name, seed);
        EXPECT_TRUE(values.contains(a.low)) << where << ": no least " << a.low;
        EXPECT_TRUE(values.contains(a.high)) << where << ": no most " << a.high;
        for (const std::int64_t units : {1, 31, 33}) {
          const std::int64_t v = units * a.step;
          if (v >= a.low && v <= a.high) {
            EXPECT_TRUE(values.contains(v)) << where << ": no " << v;
          }
        }
        auto in_quarter = [&](std::int64_t p) {
          return std::any_of(values.begin(), values.end(),
                             [&](std::int64_t v) { return v >= 3 * p / 4 && v < p; });
        };
        if (a.high >= 768 && a.step <= 256) {
          EXPECT_TRUE(in_quarter(1024)) << where << ": nothing in [768, 1023]";
        }
        std::int64_t top = 0;
        for (std::int64_t p = 64; 3 * (p / 4) <= a.high; p *= 2) {
          if ((3 * p / 4 + a.step - 1) / a.step <= std::min(p - 1, a.high) / a.step) top = p;
        }
        if (top != 0) {
          EXPECT_TRUE(in_quarter(top)) << where << ": nothing below " << top;
        }
      }
    }
  }
}

TEST(DrawnCases, SumDim1DrawsAReductionThatEndsInTheUpperQuarterOfABlock) {
  // The kernel reads the next batch's row when D1 is 768-1023 modulo 1024.
  const task_spec& task = *std::find_if(tasks().begin(), tasks().end(),
                                        [](const task_spec& t) { return t.name == "sum_dim1"; });
  for (std::uint64_t seed : {1ULL, 42ULL, 0xDEADBEEFULL}) {
    const auto cases = draw_cases(task, seed);
    EXPECT_TRUE(std::any_of(cases.begin(), cases.end(),
                            [&](const task_case& c) {
                              return value_of(task, c, "D1") % 1024 >= 768 &&
                                     value_of(task, c, "B") >= 2;
                            }))
        << "seed " << seed;
  }
}

TEST(DrawnCases, BoundsMultiplesAndTheMemoryCapHoldForEveryTaskAndSeed) {
  for (const auto& task : tasks()) {
    const std::size_t ranged = static_cast<std::size_t>(std::count_if(
        task.symbols.begin(), task.symbols.end(), [](const auto& s) { return s.range; }));
    const std::size_t free = free_symbols(task).size();
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
      const auto cases = draw_cases(task, seed * 0x9E3779B97F4A7C15ULL);
      const std::string where = fmt::format("{} seed {}", task.name, seed);
      ASSERT_LE(cases.size(), 3 + 7 * ranged) << where;
      std::size_t above_cheap = 0;
      for (const auto& c : cases) {
        const symbol_table symbols = task.integer_symbols(c);
        for (const auto& s : task.symbols) {
          if (!s.range) continue;
          // Every ranged symbol has its value in the case, within its range read in that case.
          ASSERT_TRUE(c.values.contains(s.name)) << where << " " << s.name;
          const detail::allowed_values a = detail::allowed(*s.range, symbols);
          const std::int64_t v = symbols.at(s.name);
          EXPECT_GE(v, a.min) << where << " " << c.name << " " << s.name;
          EXPECT_LE(v, a.max) << where << " " << c.name << " " << s.name;
          EXPECT_EQ(v % a.step, 0) << where << " " << c.name << " " << s.name;
        }
        std::int64_t bytes = 0;
        for (const auto& b : task.buffers) {
          EXPECT_GT(task.elements(b, c), 0) << where << " " << c.name << " " << b.name;
          bytes += task.buffer_bytes(b, c);
        }
        EXPECT_LE(bytes, task.drawn_max_bytes) << where << " " << c.name;
        if (bytes > drawn_case_bytes) ++above_cheap;
        EXPECT_LE(task.flops.evaluate(symbols), drawn_case_flops) << where << " " << c.name;
        EXPECT_FALSE(detail::drawn_case_problem(task, c, task.drawn_max_bytes, drawn_case_flops))
            << where << " " << c.name;
        EXPECT_FALSE(c.large) << where;
        EXPECT_NE(c.note.find(fmt::format("seed {}", seed * 0x9E3779B97F4A7C15ULL)),
                  std::string::npos)
            << c.note;
      }
      // Only the cases at a symbol's most may be larger than a cheap case.
      EXPECT_LE(above_cheap, free) << where;
    }
  }
}

TEST(DrawnCases, ADrawnCaseRebuildsFromItsName) {
  for (const auto& task : tasks()) {
    const auto cases = draw_cases(task, 987654321);
    for (const auto& c : cases) {
      const auto rebuilt = drawn_cases_named(task, c.name);
      ASSERT_EQ(rebuilt.size(), 1U) << c.name;
      EXPECT_EQ(rebuilt[0].name, c.name);
      EXPECT_EQ(rebuilt[0].values, c.values) << task.name << " " << c.name;
      EXPECT_EQ(task.describe(rebuilt[0]), task.describe(c));
    }
    const auto all = drawn_cases_named(task, "drawn:987654321");
    ASSERT_EQ(all.size(), cases.size()) << task.name;
    for (std::size_t k = 0; k < all.size(); ++k) EXPECT_EQ(all[k].values, cases[k].values);
  }
}

TEST(DrawnCases, ANameThatIsNoDrawnCaseSaysHowToWriteOne) {
  const task_spec& task = tasks().front();
  EXPECT_TRUE(is_drawn_case_name("drawn:5"));
  EXPECT_FALSE(is_drawn_case_name("canonical"));
  EXPECT_EQ(drawn_case_name(18446744073709551615ULL, 3), "drawn:18446744073709551615:3");
  for (const char* bad : {"drawn:", "drawn:x", "drawn:5:", "drawn:5:x", "drawn:-1", "drawn:5:1:2",
                          "drawn:18446744073709551616", "canonical"}) {
    try {
      static_cast<void>(drawn_cases_named(task, bad));
      ADD_FAILURE() << bad << " was taken";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("write drawn:SEED"), std::string::npos) << e.what();
    }
  }
  const auto cases = draw_cases(task, 5);
  try {
    static_cast<void>(drawn_cases_named(task, fmt::format("drawn:5:{}", cases.size())));
    ADD_FAILURE() << "a case past the set was taken";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("draws {} cases from seed 5", cases.size())),
              std::string::npos)
        << e.what();
  }
}

TEST(DrawnCases, ASymbolWithoutARangeKeepsItsValue) {
  // decode_attention's head size is the task's 128; its query heads are drawn as whole groups
  // of its 8 KV heads.
  const task_spec& task = *std::find_if(tasks().begin(), tasks().end(), [](const task_spec& t) {
    return t.name == "decode_attention";
  });
  std::set<std::int64_t> heads;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    for (const auto& c : draw_cases(task, seed)) {
      EXPECT_EQ(value_of(task, c, "D"), 128);
      EXPECT_EQ(value_of(task, c, "KH"), 8);
      EXPECT_EQ(value_of(task, c, "BS"), 16);
      EXPECT_FALSE(c.values.contains("D"));
      const std::int64_t qh = value_of(task, c, "QH");
      EXPECT_EQ(qh % 8, 0);
      heads.insert(qh);
      // The table is wide enough for the context, and no wider than 16 blocks more.
      const std::int64_t blocks = (value_of(task, c, "C") + 15) / 16;
      EXPECT_GE(value_of(task, c, "MAXB"), blocks);
      EXPECT_LE(value_of(task, c, "MAXB"), blocks + 16);
    }
  }
  EXPECT_TRUE(heads.contains(8) && heads.contains(64)) << "the least and the most head count";
  EXPECT_GE(heads.size(), 4U);
}

TEST(DrawnCases, ARunsDrawnCasesJoinTheTasksCases) {
  task_spec task = tasks().front();
  const std::size_t fixed = task.cases.size();
  const auto drawn = draw_cases(task, 31);
  add_drawn_cases(task, 31);
  add_drawn_cases(task, 31);  // twice: no case twice
  ASSERT_EQ(task.cases.size(), fixed + drawn.size());
  for (const auto& c : drawn) EXPECT_EQ(task.find_case(c.name).values, c.values);
  EXPECT_EQ(task.cases[fixed].name, "drawn:31:0");
}

TEST(DrawnCases, ATaskWithoutRangesDrawsNone) {
  task_spec task = tasks().front();
  task.drawn_max_bytes = 0;
  EXPECT_TRUE(draw_cases(task, 1).empty());
  EXPECT_THROW(static_cast<void>(drawn_cases_named(task, "drawn:1")), input_error);
}

}  // namespace
}  // namespace blaster
