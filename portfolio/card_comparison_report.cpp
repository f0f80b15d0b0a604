#include "portfolio/card_comparison_report.hpp"

#include <cmath>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/table_renderer.hpp"
#include "portfolio/detail/report_rows.hpp"
#include "portfolio/portfolio_report.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string describe_side(const card_side& s, const std::string& card) {
  return fmt::format(
      "{}: {} in {:.2f} us (+-{:.1f}%), {} {}{}; {}", card, s.variant, s.time_us,
      100.0 * s.uncertainty, s.ceiling,
      s.ceiling.find("launch") != std::string::npos ? fmt::format("{:.2f} us", s.ceiling_value)
      : s.ceiling == "matrix rate" ? fmt::format("{:.1f} TFLOP/s", s.ceiling_value / 1e12)
                                   : fmt::format("{:.1f} GB/s", s.ceiling_value / 1e9),
      s.tuned ? ", params from a tuned table" : "",
      s.diagnosis.empty() ? std::string("no counters taken") : s.diagnosis);
}

// Columns of the table.
constexpr metric_info task_column{
    .tag = "task", .name = "task", .unit = "", .description = "the task", .format = ""};
constexpr metric_info case_column{
    .tag = "case", .name = "case", .unit = "", .description = "the case", .format = ""};
constexpr metric_info bound_column{
    .tag = "bound",
    .name = "bound",
    .unit = "",
    .description = "what limits the case, which picks the ceiling compared",
    .format = ""};
constexpr metric_info a_time{.tag = "a_time_us",
                             .name = "A us",
                             .unit = "us",
                             .description = "A's time: its best candidate's",
                             .format = "{:.2f}"};
constexpr metric_info b_time{.tag = "b_time_us",
                             .name = "B us",
                             .unit = "us",
                             .description = "B's time: its best candidate's",
                             .format = "{:.2f}"};
constexpr metric_info time_ratio{.tag = "time_ratio",
                                 .name = "time B/A",
                                 .unit = "x",
                                 .description = "B's time over A's",
                                 .format = "{:.3f}"};
constexpr metric_info time_interval{
    .tag = "time_ratio_interval",
    .name = "interval",
    .unit = "",
    .description = "the least and most time ratio the two times' intervals allow",
    .format = ""};
constexpr metric_info ceiling_ratio{
    .tag = "ceiling_ratio",
    .name = "ceilings B/A",
    .unit = "x",
    .description = "the time ratio the two cards' ceilings for the bound predict",
    .format = "{:.3f}"};
constexpr metric_info ceiling_interval{
    .tag = "ceiling_ratio_interval",
    .name = "interval",
    .unit = "",
    .description = "the least and most ceiling ratio the ceilings' spreads allow",
    .format = ""};
constexpr metric_info departure_column{
    .tag = "departure",
    .name = "d",
    .unit = "x",
    .description =
        "the time ratio over the ceilings' ratio: 1 when both cards reach the same "
        "share of their ceilings",
    .format = "{:.3f}"};
constexpr metric_info status_column{.tag = "status",
                                    .name = "status",
                                    .unit = "",
                                    .description = "AGREES, DEPARTS, INCONCLUSIVE or NOT_COMPARED",
                                    .format = ""};
constexpr metric_info note_column{
    .tag = "note",
    .name = "note",
    .unit = "",
    .description = "which card lags its ceilings, or why the case was not compared",
    .format = ""};

table_cell number(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return std::monostate{};
  return *v;
}

table_cell interval_cell(const std::optional<ratio_interval>& r) {
  if (!r) return std::monostate{};
  return fmt::format("[{:.3f}, {}]", r->low,
                     std::isfinite(r->high) ? fmt::format("{:.3f}", r->high) : "inf");
}

}  // namespace

result_table card_comparison_table(const card_comparison& c) {
  result_table t;
  t.title = "The two cards against each other";
  t.preamble = {fmt::format("A: {} ({})", c.a_card, c.a_source),
                fmt::format("B: {} ({})", c.b_card, c.b_source)};
  t.columns = {{metric_definition::of(task_column), 0, true},
               {metric_definition::of(case_column), 0, true},
               {metric_definition::of(bound_column), 0, true},
               {metric_definition::of(a_time), 9},
               {metric_definition::of(b_time), 9},
               {metric_definition::of(time_ratio), 8},
               {metric_definition::of(time_interval), 16},
               {metric_definition::of(ceiling_ratio), 8},
               {metric_definition::of(ceiling_interval), 16},
               {metric_definition::of(departure_column), 6},
               {metric_definition::of(status_column), 12, true},
               {metric_definition::of(note_column), 0, true}};
  for (const auto& k : c.cases) {
    table_row r;
    r.cells = {k.task,
               k.case_name,
               k.bound ? table_cell(std::string(to_string(*k.bound))) : table_cell(),
               number(k.a ? std::optional(k.a->time_us) : std::nullopt),
               number(k.b ? std::optional(k.b->time_us) : std::nullopt),
               number(k.time_ratio ? std::optional(k.time_ratio->ratio) : std::nullopt),
               interval_cell(k.time_ratio),
               number(k.ceiling_ratio ? std::optional(k.ceiling_ratio->ratio) : std::nullopt),
               interval_cell(k.ceiling_ratio),
               number(k.departure ? std::optional(k.departure->ratio) : std::nullopt),
               std::string(to_string(k.status)),
               k.note.empty() ? table_cell() : table_cell(k.note)};
    if (k.status == card_agreement::departs) {
      if (k.a) r.details.push_back("A " + describe_side(*k.a, c.a_card));
      if (k.b) r.details.push_back("B " + describe_side(*k.b, c.b_card));
      r.details.push_back("hint: " + k.hint);
    }
    t.rows.push_back(std::move(r));
  }
  if (!c.only_a.empty()) {
    t.notes.push_back(
        fmt::format("Measured on the {} (A) only: {}.", c.a_card, fmt::join(c.only_a, ", ")));
  }
  if (!c.only_b.empty()) {
    t.notes.push_back(
        fmt::format("Measured on the {} (B) only: {}.", c.b_card, fmt::join(c.only_b, ", ")));
  }
  t.notes.push_back(fmt::format("{} tau = {:g}% (--threshold).", card_comparison_statistics,
                                100.0 * c.threshold));
  std::vector<std::string> counts;
  for (const card_agreement s : {card_agreement::departs, card_agreement::agrees,
                                 card_agreement::inconclusive, card_agreement::not_compared}) {
    if (const std::size_t n = c.count(s); n > 0)
      counts.push_back(fmt::format("{} {}", n, to_string(s)));
  }
  t.notes.push_back(fmt::format(
      "{} of {} cases: {}",
      c.count(card_agreement::departs) == 0 ? "nothing flagged" : "flagged: the DEPARTS rows",
      c.cases.size(), fmt::join(counts, ", ")));
  return t;
}

std::string card_comparison_markdown(const card_comparison& c) {
  std::ostringstream out;
  make_renderer("md")->render(card_comparison_table(c), out);
  return out.str();
}

json across_cards_summary(const std::vector<portfolio_outcome>& outcomes,
                          const std::vector<loaded_run>& other, const std::string& other_source) {
  std::vector<loaded_run> mine;
  for (const auto& o : outcomes) {
    mine.push_back({.source = run_folder(o.item), .report = o.report});
  }
  json j = to_json(compare_cards(mine, other, "this bundle", other_source));
  const fs::path sums = fs::path(other_source) / "SHA256SUMS";
  std::error_code ec;
  if (fs::is_regular_file(sums, ec)) j["b"]["sha256sums_sha256"] = sha256_file_hex(sums);
  return j;
}

std::string across_cards_markdown(const json& summary) {
  const auto it = summary.find("across_cards");
  if (it == summary.end() || !it->is_object()) return {};
  const card_comparison cards = card_comparison_from_json(*it);
  std::string md = "\n" + card_comparison_markdown(cards);
  if (const json& b = it->at("b"); b.contains("sha256sums_sha256")) {
    md += fmt::format(
        "\nThe {} numbers are those of {} (its SHA256SUMS has SHA-256 {}); `blaster compare "
        "--across-cards` of this bundle and that one gives this table again.\n",
        cards.b_card, cards.b_source, b["sha256sums_sha256"].get<std::string>());
  }
  return md;
}

void check_across_cards_claims(bundle_verification& v, const json& summary) {
  const auto it = summary.find("across_cards");
  if (it == summary.end()) return;
  auto claim = [&v](std::string path, std::string detail) {
    v.problems.push_back({bundle_problem_kind::claim, std::move(path), std::move(detail), "", ""});
  };
  std::set<std::string> folders;  // the run bundles the rows cite
  for (const json& row : summary.value("rows", json::array())) {
    if (row.is_object()) folders.insert(row.value("run_bundle", ""));
  }
  const json cases = it->is_object() ? it->value("cases", json()) : json();
  if (!cases.is_array()) {
    claim("results.json across_cards", "not a comparison of two cards' cases");
    return;
  }
  const std::string card = it->value("a", json::object()).value("card", "");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string where = fmt::format("results.json across_cards.cases[{}]", i);
    const json a = cases[i].is_object() ? cases[i].value("a", json()) : json();
    if (a.is_null()) continue;  // not compared: nothing of this bundle is stated
    const std::string folder = a.is_object() ? a.value("source", "") : "";
    if (!folders.contains(folder) || folder.empty() || folder.find("..") != std::string::npos) {
      claim(where, fmt::format("names {} as its run, which no row of this bundle cites",
                               json(folder).dump()));
      continue;
    }
    const std::optional<std::string> text = read_file_if_exists(v.dir / folder / "results.json");
    const json source = text ? json::parse(*text, nullptr, /*allow_exceptions=*/false) : json();
    std::optional<bench_report> report;
    try {
      if (source.is_object() && source.contains("results")) report = bench_report_from_json(source);
    } catch (const std::exception&) {
      report.reset();
    }
    if (!report) continue;  // the row's own check names a run bundle that does not read
    const variant_result* best = detail::best_result(*report);
    const json stated = {a.value("variant", json()), a.value("time_us", json()), card};
    const json actual = {best ? json(best->label) : json(),
                         best ? detail::optional_number(best->time_us) : json(),
                         report->device ? json(report->device->name) : json()};
    if (stated != actual) {
      claim(where, fmt::format("states [variant, time_us, card] {} but {}/results.json says {}",
                               stated.dump(), folder, actual.dump()));
    }
  }
}

}  // namespace blaster
