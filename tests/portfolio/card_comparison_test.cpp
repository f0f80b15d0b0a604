// Two cards against each other: each case's time ratio beside the ratio of the two cards'
// ceilings for its bound, flagged where the intervals cannot explain the difference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/store.hpp"
#include "portfolio/card_comparison.hpp"
#include "portfolio/card_comparison_report.hpp"
#include "portfolio/portfolio_report.hpp"
#include "portfolio/portfolio_runner.hpp"
#include "portfolio/suite.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr double h200_copy = 4.0e12;  // [bytes/s]
constexpr double h100_copy = 3.0e12;  // [bytes/s]: the H100 takes 4/3 the H200's time

struct case_spec {
  std::string gpu = "NVIDIA H200";
  std::string task = "relu";
  std::string case_name = "canonical";
  std::string shape = "n=1";
  timing_mode mode = timing_mode::hot;
  double time_us = 30.0;  // the best candidate's
  double noise = 0.005;   // its relative noise
  double copy_bps = h200_copy;
  std::string variant = "fast[VEC=4]";
};

bandwidth_ceiling ceiling_of(double bytes_per_second, double spread) {
  bandwidth_ceiling c;
  c.bytes_per_second = bytes_per_second;
  c.spread = spread;
  return c;
}

matrix_rate rate_of(double flops_per_second) {
  matrix_rate m;
  m.flops_per_second = flops_per_second;
  return m;
}

counter_diagnosis diagnosis_of(bound_by bound, const std::string& line) {
  counter_diagnosis d;
  d.bound = bound;
  d.line = line;
  return d;
}

variant_result timed(const std::string& label, double time_us, double noise) {
  variant_result r;
  r.label = label;
  r.candidate = label.substr(0, label.find('['));
  r.file = "/home/someone/blaster/kernels/relu/" + r.candidate + ".cu";
  r.status = "passed";
  r.time_us = time_us;
  r.max_noise = noise;
  return r;
}

loaded_run run_of(const case_spec& s) {
  bench_report r;
  r.task = s.task;
  r.timed_case = s.case_name;
  r.timed_shape = s.shape;
  r.dtype = "f16";
  r.gpu = true;
  r.timing.mode = s.mode;
  r.device = cuda::device_properties{.name = s.gpu, .uuid = "GPU-" + s.gpu};
  r.memory = memory_ceilings{};
  r.memory->copy = ceiling_of(s.copy_bps, 0.002);
  variant_result base = timed("init", 4.0 * s.time_us, s.noise);
  base.baseline = true;
  variant_result best = timed(s.variant, s.time_us, s.noise);
  best.speedup = 4.0;
  best.time_over_floor = 1.1;
  r.results = {base, best};
  return {.source = s.gpu + " " + s.task + " " + s.case_name, .report = r};
}

case_spec on_h100(case_spec s) {
  s.gpu = "NVIDIA H100";
  s.copy_bps = h100_copy;
  return s;
}

const card_case& only_case(const card_comparison& c) {
  EXPECT_EQ(c.cases.size(), 1U);
  return c.cases.front();
}

TEST(CardComparison, ABandwidthBoundCaseThatScalesWithTheCopyBandwidthAgrees) {
  const case_spec h200{.time_us = 30.0};
  case_spec h100 = on_h100(h200);
  h100.time_us = 40.0;  // 4/3 of the H200's, as the two copy ceilings are
  const card_comparison c = compare_cards({run_of(h200)}, {run_of(h100)}, "a", "b");
  EXPECT_EQ(c.a_card, "NVIDIA H200");
  EXPECT_EQ(c.b_card, "NVIDIA H100");
  const card_case& k = only_case(c);
  ASSERT_TRUE(k.bound);
  EXPECT_EQ(*k.bound, bound_by::bandwidth);
  EXPECT_EQ(k.bound_from, "roofline");
  EXPECT_EQ(k.status, card_agreement::agrees) << k.note;
  EXPECT_NEAR(k.time_ratio->ratio, 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(k.ceiling_ratio->ratio, 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(k.departure->ratio, 1.0, 1e-12);
  // The intervals hold the ratio: each time's 0.5% and each ceiling's 0.2% spread.
  EXPECT_LT(k.time_ratio->low, k.time_ratio->ratio);
  EXPECT_GT(k.time_ratio->high, k.time_ratio->ratio);
  EXPECT_LT(k.ceiling_ratio->low, k.ceiling_ratio->ratio);
  EXPECT_GT(k.ceiling_ratio->high, k.ceiling_ratio->ratio);
  EXPECT_EQ(k.a->ceiling, "copy bandwidth");
  EXPECT_EQ(k.hint, "");
  EXPECT_EQ(k.note, "");
  EXPECT_EQ(c.count(card_agreement::departs), 0U);

  // Another protocol is compared all the same, and said.
  loaded_run fewer = run_of(h100);
  fewer.report.sessions = 3;
  const card_case noted = only_case(compare_cards({run_of(h200)}, {fewer}, "a", "b"));
  EXPECT_EQ(noted.status, card_agreement::agrees);
  EXPECT_EQ(noted.note, "measured under other protocols: sessions 1 vs 3");
}

TEST(CardComparison, ACaseSlowerOnOneCardThanItsCeilingsSayIsFlaggedWithAHint) {
  const case_spec h200{.time_us = 30.0};
  case_spec h100 = on_h100(h200);
  h100.time_us = 60.0;  // 2x, where the ceilings say 4/3
  h100.variant = "fast[VEC=2]";
  const card_comparison c = compare_cards({run_of(h200)}, {run_of(h100)}, "a", "b");
  const card_case& k = only_case(c);
  EXPECT_EQ(k.status, card_agreement::departs);
  EXPECT_NEAR(k.departure->ratio, 1.5, 1e-12);
  EXPECT_GT(k.departure->low, 1.1);
  EXPECT_NE(k.note.find("the NVIDIA H100 takes 1.50x the time"), std::string::npos) << k.note;
  // Another variant won on the H100: tuned for the H200, so tune on the H100.
  EXPECT_NE(k.hint.find("tuned for the NVIDIA H200"), std::string::npos) << k.hint;
  EXPECT_NE(k.hint.find("blaster tune --task relu --candidate kernels/relu/fast.cu --cases "
                        "canonical"),
            std::string::npos)
      << k.hint;
  EXPECT_NE(k.hint.find("on the NVIDIA H100"), std::string::npos) << k.hint;
  EXPECT_EQ(c.count(card_agreement::departs), 1U);

  // The other way round, the H200 is the card that lags.
  const card_comparison r = compare_cards({run_of(h100)}, {run_of(h200)}, "b", "a");
  EXPECT_EQ(only_case(r).status, card_agreement::departs);
  EXPECT_NEAR(only_case(r).departure->ratio, 1.0 / 1.5, 1e-12);
  EXPECT_NE(only_case(r).note.find("the NVIDIA H100 takes 1.50x"), std::string::npos)
      << only_case(r).note;
}

TEST(CardComparison, TheIntervalsDecideBetweenDepartsAndInconclusive) {
  // A departure of 1.15 against tau = 10%: flagged when the times are tight, not when each is
  // uncertain by 5% (the departure's interval then reaches below 1.1).
  case_spec h200{.time_us = 30.0, .noise = 0.005};
  case_spec h100 = on_h100(h200);
  h100.time_us = 40.0 * 1.15;
  EXPECT_EQ(only_case(compare_cards({run_of(h200)}, {run_of(h100)}, "a", "b")).status,
            card_agreement::departs);
  h200.noise = h100.noise = 0.05;
  const card_case k = only_case(compare_cards({run_of(h200)}, {run_of(h100)}, "a", "b"));
  EXPECT_EQ(k.status, card_agreement::inconclusive);
  EXPECT_LT(k.departure->low, 1.1);
  EXPECT_GT(k.departure->high, 1.1);
  // A larger tau takes the tight case in.
  h200.noise = h100.noise = 0.005;
  EXPECT_EQ(
      only_case(compare_cards({run_of(h200)}, {run_of(h100)}, "a", "b", {.threshold = 0.3})).status,
      card_agreement::agrees);
}

TEST(CardComparison, ALaunchBoundCaseIsHeldToTheLaunchFloors) {
  case_spec h200{.mode = timing_mode::graph, .time_us = 2.2};
  case_spec h100 = on_h100(h200);
  h100.time_us = 2.75;
  loaded_run a = run_of(h200);
  loaded_run b = run_of(h100);
  a.report.floors = launch_floors{};
  a.report.floors->us[timing_mode::graph] = 2.0;
  b.report.floors = launch_floors{};
  b.report.floors->us[timing_mode::graph] = 2.5;
  const card_case k = only_case(compare_cards({a}, {b}, "a", "b"));
  EXPECT_EQ(*k.bound, bound_by::launch);
  EXPECT_EQ(k.a->ceiling, "graph launch floor");
  EXPECT_NEAR(k.ceiling_ratio->ratio, 1.25, 1e-12);  // a floor is a time: B's over A's
  EXPECT_EQ(k.status, card_agreement::agrees);
  // Held to the copy bandwidths instead, its ratio 1.25 would depart from 4/3 by less than tau,
  // so make the floors say the H100 launches as fast as the H200: then it departs.
  b.report.floors->us[timing_mode::graph] = 2.0;
  EXPECT_EQ(only_case(compare_cards({a}, {b}, "a", "b")).status, card_agreement::departs);
  // Without the floors recorded there is nothing to compare the times with.
  b.report.floors.reset();
  const card_case none = only_case(compare_cards({a}, {b}, "a", "b"));
  EXPECT_EQ(none.status, card_agreement::not_compared);
  EXPECT_NE(none.note.find("NVIDIA H100 recorded no ceiling for a launch-bound case"),
            std::string::npos)
      << none.note;
}

TEST(CardComparison, ComputeBoundCasesUseTheMatrixRateByCountersOrRoofline) {
  case_spec h200{.task = "matmul_smallk", .time_us = 100.0};
  case_spec h100 = on_h100(h200);
  h100.time_us = 125.0;  // the matrix rates below are 1.25 apart; the copy ceilings 4/3
  loaded_run a = run_of(h200);
  loaded_run b = run_of(h100);
  a.report.matrix = rate_of(1.0e15);
  b.report.matrix = rate_of(0.8e15);
  // The roofline: nearer its matrix rate (70%) than its memory floor (1 / 1.1 = 91%)? No: memory.
  a.report.results[1].matrix_rate_pct = 70.0;
  EXPECT_EQ(*only_case(compare_cards({a}, {b}, "a", "b")).bound, bound_by::bandwidth);
  // Nearer the matrix rate: compute-bound, and the times agree with the rates.
  a.report.results[1].matrix_rate_pct = 95.0;
  card_case k = only_case(compare_cards({a}, {b}, "a", "b"));
  EXPECT_EQ(*k.bound, bound_by::compute);
  EXPECT_EQ(k.bound_from, "roofline");
  EXPECT_EQ(k.a->ceiling, "matrix rate");
  EXPECT_NEAR(k.ceiling_ratio->ratio, 1.25, 1e-12);
  EXPECT_EQ(k.status, card_agreement::agrees);
  // Counters that both say compute-bound decide over the roofline.
  a.report.results[1].matrix_rate_pct = 10.0;
  for (loaded_run* run : {&a, &b}) {
    run->report.results[1].profile = diagnostics{};
    run->report.results[1].profile->diagnosis =
        diagnosis_of(bound_by::compute, "compute-bound (tensor 81%)");
  }
  k = only_case(compare_cards({a}, {b}, "a", "b"));
  EXPECT_EQ(*k.bound, bound_by::compute);
  EXPECT_EQ(k.bound_from, "counters");
  EXPECT_EQ(k.b->diagnosis, "compute-bound (tensor 81%)");
  // Counters that disagree leave it to the roofline, and the note says so.
  b.report.results[1].profile->diagnosis->bound = bound_by::bandwidth;
  k = only_case(compare_cards({a}, {b}, "a", "b"));
  EXPECT_EQ(k.bound_from, "roofline");
  EXPECT_NE(k.note.find("the counters disagree"), std::string::npos) << k.note;
}

TEST(CardComparison, TheMemoryCeilingIsTheOneTheRooflineFloorUsed) {
  const case_spec h200{.time_us = 10.0};
  case_spec h100 = on_h100(h200);
  h100.time_us = 12.0;
  loaded_run a = run_of(h200);
  loaded_run b = run_of(h100);
  // Data in the L2 on both cards: their L2 ceilings are 1.2 apart, the copy ceilings 4/3.
  a.report.results[1].floor =
      roofline_floor{.level = "l2", .ceiling_bytes_per_second = 12e12, .uncertainty = 0.01};
  b.report.results[1].floor =
      roofline_floor{.level = "l2", .ceiling_bytes_per_second = 10e12, .uncertainty = 0.01};
  const card_case k = only_case(compare_cards({a}, {b}, "a", "b"));
  EXPECT_EQ(k.a->ceiling, "L2 bandwidth");
  EXPECT_NEAR(k.ceiling_ratio->ratio, 1.2, 1e-12);
  EXPECT_EQ(k.status, card_agreement::agrees);
  // A read-only case without a floor: the read ceiling, where the runs measured one.
  for (loaded_run* run : {&a, &b}) {
    run->report.results[1].floor.reset();
    run->report.roofline_mix_known = true;
    run->report.roofline_read_bytes = 1000;
    run->report.roofline_write_bytes = 0;
  }
  a.report.memory->read = ceiling_of(4.4e12, 0.01);
  a.report.memory->write = ceiling_of(3.5e12, 0.01);
  b.report.memory->read = ceiling_of(3.3e12, 0.01);
  b.report.memory->write = ceiling_of(2.5e12, 0.01);
  const card_case r = only_case(compare_cards({a}, {b}, "a", "b"));
  EXPECT_EQ(r.a->ceiling, "read bandwidth");
  EXPECT_NEAR(r.ceiling_ratio->ratio, 4.4 / 3.3, 1e-12);
}

TEST(CardComparison, ATimeBelowItsFloorIsAMeasurementProblem) {
  const case_spec h200{.time_us = 30.0};
  case_spec h100 = on_h100(h200);
  h100.time_us = 60.0;
  loaded_run a = run_of(h200);
  a.report.results[1].time_over_floor = 0.8;
  const card_case k = only_case(compare_cards({a}, {run_of(h100)}, "a", "b"));
  EXPECT_EQ(k.status, card_agreement::departs);
  EXPECT_NE(k.hint.find("a measurement problem: the NVIDIA H200 time is below its roofline floor"),
            std::string::npos)
      << k.hint;
  // The same variant on both cards, both possible: either cause, each named.
  const card_case same = only_case(compare_cards({run_of(h200)}, {run_of(h100)}, "a", "b"));
  EXPECT_NE(same.hint.find("the same variant on both cards"), std::string::npos) << same.hint;
  EXPECT_NE(same.hint.find("measurement problem"), std::string::npos) << same.hint;
}

TEST(CardComparison, CasesThatCannotBeComparedSayWhy) {
  const case_spec h200{};
  case_spec h100 = on_h100(h200);
  h100.shape = "n=2";
  card_case k = only_case(compare_cards({run_of(h200)}, {run_of(h100)}, "a", "b"));
  EXPECT_EQ(k.status, card_agreement::not_compared);
  EXPECT_EQ(k.note, "not compared: shape n=1 vs n=2");
  h100.shape = h200.shape;
  loaded_run b = run_of(h100);
  b.report.results[1].status = "rejected";
  k = only_case(compare_cards({run_of(h200)}, {b}, "a", "b"));
  EXPECT_EQ(k.status, card_agreement::not_compared);
  EXPECT_NE(k.note.find("no candidate passed and was timed on the NVIDIA H100"), std::string::npos)
      << k.note;
}

TEST(CardComparison, CasesOnOneCardOnlyAreListedApart) {
  const case_spec both{};
  case_spec large = both;
  large.case_name = "large";
  case_spec other = both;
  other.task = "gelu";
  const card_comparison c = compare_cards(
      {run_of(both), run_of(large)}, {run_of(on_h100(both)), run_of(on_h100(other))}, "a", "b");
  EXPECT_EQ(c.cases.size(), 1U);
  EXPECT_EQ(c.only_a, std::vector<std::string>{"relu large"});
  EXPECT_EQ(c.only_b, std::vector<std::string>{"gelu canonical"});
}

TEST(CardComparison, BadInputIsRefusedWithWhatToGive) {
  const case_spec h200{};
  auto message = [](const std::vector<loaded_run>& a, const std::vector<loaded_run>& b) {
    try {
      static_cast<void>(compare_cards(a, b, "left", "right"));
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // The same card on both sides.
  EXPECT_NE(message({run_of(h200)}, {run_of(h200)}).find("are both NVIDIA H200"),
            std::string::npos);
  // No case in common.
  case_spec other = on_h100(h200);
  other.task = "gelu";
  EXPECT_NE(message({run_of(h200)}, {run_of(other)}).find("no case in common"), std::string::npos);
  // One side of two models.
  case_spec large = on_h100(h200);
  large.case_name = "large";
  EXPECT_NE(message({run_of(h200)}, {run_of(on_h100(h200)), run_of(large),
                                     [&] {
                                       case_spec s = h200;
                                       s.task = "gelu";
                                       return run_of(s);
                                     }()})
                .find("GPU models"),
            std::string::npos);
  // One case twice on a side.
  EXPECT_NE(message({run_of(h200), run_of(h200)}, {run_of(on_h100(h200))}).find("both hold"),
            std::string::npos);
  // A run timed on no GPU.
  loaded_run compiled = run_of(h200);
  compiled.report.device.reset();
  EXPECT_NE(message({compiled}, {run_of(on_h100(h200))}).find("names no GPU"), std::string::npos);
}

TEST(CardComparison, ItsJsonReadsBackAndRendersTheFlaggedCaseWithBothDiagnoses) {
  const case_spec h200{.time_us = 30.0};
  case_spec h100 = on_h100(h200);
  h100.time_us = 60.0;
  loaded_run a = run_of(h200);
  a.report.results[1].profile = diagnostics{};
  a.report.results[1].profile->diagnosis =
      diagnosis_of(bound_by::bandwidth, "bandwidth-bound (DRAM 91%)");
  const card_comparison c = compare_cards({a}, {run_of(h100)}, "a", "b");
  const card_comparison back = card_comparison_from_json(to_json(c));
  EXPECT_EQ(to_json(back), to_json(c));
  const std::string md = card_comparison_markdown(back);
  EXPECT_NE(md.find("## The two cards against each other"), std::string::npos) << md;
  EXPECT_NE(md.find("| relu | canonical | bandwidth-bound |"), std::string::npos) << md;
  EXPECT_NE(md.find("DEPARTS"), std::string::npos) << md;
  EXPECT_NE(md.find("bandwidth-bound (DRAM 91%)"), std::string::npos) << md;
  EXPECT_NE(md.find("NVIDIA H100: fast[VEC=4] in 60.00 us"), std::string::npos) << md;
  EXPECT_NE(md.find("no counters taken"), std::string::npos) << md;
  EXPECT_NE(md.find("hint: "), std::string::npos) << md;
}

// A portfolio of the H200 given the H100's runs of its case: results.json holds the comparison,
// the report its section with the flagged case, and the bundle verifies with it.
TEST(CardComparison, APortfolioReportHasTheSectionAndItsBundleVerifies) {
  struct temp_dir {
    fs::path root =
        fs::temp_directory_path() / ("blaster-card-comparison-" + std::to_string(::getpid()));
    temp_dir() {
      fs::remove_all(root);
      fs::create_directories(root);
    }
    ~temp_dir() { fs::remove_all(root); }
    const fs::path& path() const { return root; }
  } const dir;
  const fs::path suite_file = dir.path() / "one.json";
  write_file_atomically(suite_file, R"({
      "name": "one", "title": "one task", "protocol": {"sessions": 5},
      "entries": [{"id": "019", "task": "relu", "cases": [{"case": "canonical"}]}]})");
  const suite s = load_suite(BLASTER_SOURCE_DIR, suite_file.string());
  store records(dir.path() / "home");
  portfolio_options options;
  options.root = BLASTER_SOURCE_DIR;
  options.command = "t";
  // The H200's run, recorded as a bench records one.
  const auto bench = [](const bench_options& o, store& r, warm_bench& warm) {
    if (warm.series.empty()) warm.join("fake");
    bench_report report = run_of({.time_us = 30.0}).report;
    report.task = o.task;
    report.timed_case = o.timed_case;
    report.timing = o.timing;
    report.sessions = o.sessions;
    report.run_id = r.begin_run(o.command, o.task, "{}");
    r.finish_run(report.run_id, "completed", r.cas().put(stored_report_bytes(report)));
    return report;
  };
  const std::vector<portfolio_outcome> outcomes = run_portfolio(s, options, records, bench);
  ASSERT_EQ(outcomes.size(), 1U);
  case_spec h100 = on_h100({.time_us = 60.0});
  h100.variant = "fast[VEC=2]";
  // The other card's bundle: its SHA256SUMS ties the section to it.
  const fs::path other = dir.path() / "core10-h100-v1";
  fs::create_directories(other);
  write_file_atomically(other / "SHA256SUMS", "sums of the H100's bundle\n");
  json summary = summarize_portfolio(s, outcomes, json());
  summary["across_cards"] = across_cards_summary(outcomes, {run_of(h100)}, other.string());
  const json& section = summary.at("across_cards");
  EXPECT_EQ(section.at("a").at("card"), "NVIDIA H200");
  EXPECT_EQ(section.at("b").at("sha256sums_sha256"), sha256_file_hex(other / "SHA256SUMS"));
  ASSERT_EQ(section.at("cases").size(), 1U);
  EXPECT_EQ(section.at("cases").at(0).at("status"), "DEPARTS");
  EXPECT_EQ(section.at("cases").at(0).at("a").at("source"), "runs/019-relu-canonical");

  const std::string md = render_portfolio_markdown(summary);
  EXPECT_NE(md.find("## The two cards against each other"), std::string::npos) << md;
  EXPECT_NE(md.find("A: NVIDIA H200 (this bundle)"), std::string::npos) << md;
  EXPECT_NE(md.find("DEPARTS"), std::string::npos) << md;
  EXPECT_NE(md.find("tuned for the NVIDIA H200"), std::string::npos) << md;
  EXPECT_NE(md.find("its SHA256SUMS has SHA-256 " + sha256_file_hex(other / "SHA256SUMS")),
            std::string::npos)
      << md;
  // Without the section the report has none.
  EXPECT_EQ(render_portfolio_markdown(summarize_portfolio(s, outcomes, json()))
                .find("The two cards against each other"),
            std::string::npos);

  const fs::path out = dir.path() / "bundle";
  write_portfolio_bundle(records, s, outcomes, summary, json(), out, nullptr);
  const bundle_verification v = verify_evidence_bundle(out, nullptr);
  EXPECT_TRUE(v.ok()) << (v.problems.empty() ? "" : v.problems[0].detail);
  EXPECT_NE(read_file(out / "report.md").find("The two cards against each other"),
            std::string::npos);

  // The H200's time in the section edited, SHA256SUMS rewritten to match: the hashes hold, the
  // claim does not, since the run it names says otherwise.
  json edited = json::parse(read_file(out / "results.json"));
  edited["across_cards"]["cases"][0]["a"]["time_us"] = 20.0;
  const std::string before = sha256_file_hex(out / "results.json");
  write_file_atomically(out / "results.json", edited.dump(1) + "\n");
  std::string sums = read_file(out / "SHA256SUMS");
  sums.replace(sums.find(before), before.size(), sha256_file_hex(out / "results.json"));
  write_file_atomically(out / "SHA256SUMS", sums);
  const bundle_verification forged = verify_evidence_bundle(out, nullptr);
  ASSERT_FALSE(forged.ok());
  EXPECT_EQ(forged.problems.front().path, "results.json across_cards.cases[0]");
  EXPECT_NE(forged.problems.front().detail.find("[\"fast[VEC=4]\",20.0,\"NVIDIA H200\"]"),
            std::string::npos)
      << forged.problems.front().detail;
}

}  // namespace
}  // namespace blaster
