#include "portfolio/card_comparison.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "portfolio/detail/card_ceilings.hpp"
#include "portfolio/detail/report_rows.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

struct agreement_name {
  card_agreement status;
  std::string_view name;
};

constexpr std::array agreement_names{
    agreement_name{card_agreement::agrees, "AGREES"},
    agreement_name{card_agreement::departs, "DEPARTS"},
    agreement_name{card_agreement::inconclusive, "INCONCLUSIVE"},
    agreement_name{card_agreement::not_compared, "NOT_COMPARED"},
};

std::string key_of(const bench_report& r) { return r.task + '\0' + r.timed_case; }

// The one GPU model of a side's runs.
std::string card_of(const std::vector<loaded_run>& runs, std::string_view side,
                    const std::string& source) {
  std::map<std::string, std::string> models;  // model: a run of it
  for (const auto& run : runs) {
    if (!run.report.device) {
      BLASTER_INPUT_ERROR(
          "{} ({}): {} names no GPU (it was compiled where there is none); --across-cards "
          "compares runs timed on a GPU: give a portfolio bundle or home of one card",
          side, source, run.source);
    }
    models.emplace(run.report.device->name, run.source);
  }
  if (models.empty()) {
    BLASTER_INPUT_ERROR("{} ({}): no run to compare; give a portfolio bundle or home of one card",
                        side, source);
  }
  if (models.size() > 1) {
    std::vector<std::string> named;
    for (const auto& [model, run] : models) named.push_back(fmt::format("{} ({})", model, run));
    BLASTER_INPUT_ERROR(
        "{} ({}): its runs are of {} GPU models: {}; each side of --across-cards is one card's "
        "bundle or home",
        side, source, models.size(), fmt::join(named, ", "));
  }
  return models.begin()->first;
}

std::map<std::string, const loaded_run*> index_cases(const std::vector<loaded_run>& runs,
                                                     std::string_view side) {
  std::map<std::string, const loaded_run*> out;
  for (const auto& run : runs) {
    const auto [at, inserted] = out.emplace(key_of(run.report), &run);
    if (!inserted) {
      BLASTER_INPUT_ERROR(
          "{}: {} and {} both hold task {} case {}; give {} one run of each task and case (a "
          "portfolio's bundle or home)",
          side, at->second->source, run.source, run.report.task, run.report.timed_case, side);
    }
  }
  return out;
}

card_side side_of(const loaded_run& run, const variant_result& v) {
  card_side s;
  s.source = run.source;
  s.variant = v.label;
  s.file = v.file;
  s.time_us = *v.time_us;
  s.uncertainty = relative_uncertainty(v, run.report.aa);
  if (v.profile && v.profile->diagnosis) s.diagnosis = v.profile->diagnosis->line;
  s.time_over_floor = v.time_over_floor;
  s.tuned = v.tuned.has_value();
  return s;
}

bool timed(const variant_result* v) {
  return v != nullptr && v->time_us && std::isfinite(*v->time_us) && *v->time_us > 0;
}

// The time ratio over the ceilings' ratio, with the interval both allow.
ratio_interval departure_of(const ratio_interval& t, const ratio_interval& c) {
  const double inf = std::numeric_limits<double>::infinity();
  return {.ratio = t.ratio / c.ratio,
          .low = c.high > 0 && std::isfinite(c.high) ? t.low / c.high : 0.0,
          .high = c.low > 0 ? t.high / c.low : inf};
}

card_agreement judge(const ratio_interval& d, double tau) {
  if (d.low > 1.0 + tau || d.high < 1.0 - tau) return card_agreement::departs;
  if (d.low >= 1.0 - tau && d.high <= 1.0 + tau) return card_agreement::agrees;
  return card_agreement::inconclusive;
}

// A candidate's file as the tree names it (kernels/<task>/F.cu), whatever folder the measuring
// machine kept the tree in: the hint is run on the other card's machine.
std::string tree_path(const std::string& file) {
  for (const char* folder : {"/kernels/", "/tasks/"}) {
    if (const std::size_t at = file.rfind(folder); at != std::string::npos) {
      return file.substr(at + 1);
    }
  }
  return file;
}

// Why a flagged case departs, and what to do about it.
std::string hint_for(const card_case& c, const std::string& a_card, const std::string& b_card) {
  const bool b_lags = c.departure->ratio > 1.0;
  const card_side& lag = b_lags ? *c.b : *c.a;
  const card_side& other = b_lags ? *c.a : *c.b;
  const std::string& lag_card = b_lags ? b_card : a_card;
  const std::string& other_card = b_lags ? a_card : b_card;
  for (const auto& [s, card] : {std::pair{&*c.a, &a_card}, std::pair{&*c.b, &b_card}}) {
    if (s->time_over_floor && *s->time_over_floor < 1.0) {
      return fmt::format(
          "a measurement problem: the {} time is below its roofline floor ({:.2f}x of it), which "
          "no kernel that does the work reaches; measure the case again there",
          *card, *s->time_over_floor);
    }
  }
  const std::string file = tree_path(other.file.empty() ? lag.file : other.file);
  const std::string tune = fmt::format("blaster tune --task {} --candidate {} --cases {}", c.task,
                                       file.empty() ? std::string("FILE") : file, c.case_name);
  if (lag.variant != other.variant || (other.tuned && !lag.tuned)) {
    return fmt::format(
        "tuned for the {}: its best there is {}{}, on the {} {}{}; run `{}` on the {}, then the "
        "case again",
        other_card, other.variant, other.tuned ? " (from a tuned table)" : "", lag_card,
        lag.variant, lag.tuned ? " (from a tuned table)" : "", tune, lag_card);
  }
  return fmt::format(
      "the same variant on both cards: either it is tuned for the {} (run `{}` on the {}) or a "
      "measurement problem (see each card's diagnosis; measure the case again on both)",
      other_card, tune, lag_card);
}

card_case compare_case(const loaded_run& ra, const loaded_run& rb, const std::string& a_card,
                       const std::string& b_card, double tau) {
  const bench_report& a = ra.report;
  const bench_report& b = rb.report;
  card_case c{.task = a.task,
              .case_name = a.timed_case,
              .shape = a.timed_shape,
              .dtype = a.dtype,
              .mode = std::string(to_string(a.timing.mode))};
  std::vector<std::string> differ;
  if (a.timed_shape != b.timed_shape) {
    differ.push_back(fmt::format("shape {} vs {}", a.timed_shape, b.timed_shape));
  }
  if (a.dtype != b.dtype) differ.push_back(fmt::format("dtype {} vs {}", a.dtype, b.dtype));
  if (a.timing.mode != b.timing.mode) {
    differ.push_back(
        fmt::format("mode {} vs {}", to_string(a.timing.mode), to_string(b.timing.mode)));
  }
  if (!differ.empty()) {
    c.note = fmt::format("not compared: {}", fmt::join(differ, "; "));
    return c;
  }
  const variant_result* va = detail::best_result(a);
  const variant_result* vb = detail::best_result(b);
  if (!timed(va) || !timed(vb)) {
    c.note = fmt::format("not compared: no candidate passed and was timed on the {}",
                         !timed(va) && !timed(vb) ? fmt::format("{} nor the {}", a_card, b_card)
                         : !timed(va)             ? a_card
                                                  : b_card);
    return c;
  }
  const detail::bound_choice bound = detail::choose_bound(a, *va, b, *vb, a_card, b_card);
  c.bound = bound.bound;
  c.bound_from = bound.from;
  c.a = side_of(ra, *va);
  c.b = side_of(rb, *vb);
  const std::optional<detail::case_ceiling> ca = detail::ceiling_for(a, *va, bound.bound);
  const std::optional<detail::case_ceiling> cb = detail::ceiling_for(b, *vb, bound.bound);
  for (const auto& [side, found] : {std::pair{&*c.a, &ca}, std::pair{&*c.b, &cb}}) {
    if (!*found) continue;
    side->ceiling = (*found)->name;
    side->ceiling_value = (*found)->value;
    side->ceiling_uncertainty = (*found)->uncertainty;
  }
  c.time_ratio = ratio_of(c.a->time_us, c.a->uncertainty, c.b->time_us, c.b->uncertainty);
  if (!ca || !cb) {
    c.note = fmt::format("not compared: the {} recorded no ceiling for a {} case",
                         !ca && !cb ? fmt::format("{} nor the {}", a_card, b_card)
                         : !ca      ? a_card
                                    : b_card,
                         to_string(bound.bound));
    return c;
  }
  // A rate's ratio A/B predicts B's time over A's; a launch floor is a time itself.
  c.ceiling_ratio = bound.bound == bound_by::launch
                        ? ratio_of(ca->value, ca->uncertainty, cb->value, cb->uncertainty)
                        : ratio_of(cb->value, cb->uncertainty, ca->value, ca->uncertainty);
  c.departure = departure_of(*c.time_ratio, *c.ceiling_ratio);
  c.status = judge(*c.departure, tau);
  std::vector<std::string> notes;
  if (!bound.note.empty()) notes.push_back(bound.note);
  // The GPU differs by design, and shape, dtype and mode were refused above; a protocol that
  // differs is compared, and said.
  std::vector<std::string> protocol;
  for (const key_difference& d : key_differences(a, b)) {
    if (d.what != "GPU") protocol.push_back(fmt::format("{} {} vs {}", d.what, d.a, d.b));
  }
  if (!protocol.empty()) {
    notes.push_back(fmt::format("measured under other protocols: {}", fmt::join(protocol, ", ")));
  }
  if (c.status == card_agreement::departs) {
    const bool b_lags = c.departure->ratio > 1.0;
    notes.insert(notes.begin(),
                 fmt::format("the {} takes {:.2f}x the time the ceilings predict from the {}'s",
                             b_lags ? b_card : a_card,
                             b_lags ? c.departure->ratio : 1.0 / c.departure->ratio,
                             b_lags ? a_card : b_card));
    c.hint = hint_for(c, a_card, b_card);
  }
  c.note = fmt::format("{}", fmt::join(notes, "; "));
  return c;
}

json ratio_json(const std::optional<ratio_interval>& r) {
  if (!r) return nullptr;
  auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(); };
  return {{"ratio", finite(r->ratio)}, {"low", finite(r->low)}, {"high", finite(r->high)}};
}

std::optional<ratio_interval> ratio_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto at = [&j](const char* key, double missing) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : missing;
  };
  return ratio_interval{.ratio = at("ratio", 0.0),
                        .low = at("low", 0.0),
                        .high = at("high", std::numeric_limits<double>::infinity())};
}

json side_json(const std::optional<card_side>& s) {
  if (!s) return nullptr;
  return {{"source", s->source},
          {"variant", s->variant},
          {"file", s->file},
          {"time_us", s->time_us},
          {"uncertainty", s->uncertainty},
          {"ceiling", s->ceiling},
          {"ceiling_value", s->ceiling_value},
          {"ceiling_uncertainty", s->ceiling_uncertainty},
          {"diagnosis", s->diagnosis},
          {"time_over_floor", detail::optional_number(s->time_over_floor)},
          {"tuned", s->tuned}};
}

std::optional<card_side> side_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  card_side s;
  s.source = j.value("source", "");
  s.variant = j.value("variant", "");
  s.file = j.value("file", "");
  s.time_us = j.value("time_us", 0.0);
  s.uncertainty = j.value("uncertainty", 0.0);
  s.ceiling = j.value("ceiling", "");
  s.ceiling_value = j.value("ceiling_value", 0.0);
  s.ceiling_uncertainty = j.value("ceiling_uncertainty", 0.0);
  s.diagnosis = j.value("diagnosis", "");
  if (j.contains("time_over_floor") && j["time_over_floor"].is_number()) {
    s.time_over_floor = j["time_over_floor"].get<double>();
  }
  s.tuned = j.value("tuned", false);
  return s;
}

}  // namespace

std::string_view to_string(card_agreement status) {
  for (const auto& s : agreement_names) {
    if (s.status == status) return s.name;
  }
  return "UNKNOWN";
}

std::optional<card_agreement> card_agreement_from_string(std::string_view text) {
  for (const auto& s : agreement_names) {
    if (s.name == text) return s.status;
  }
  return std::nullopt;
}

std::size_t card_comparison::count(card_agreement status) const {
  return static_cast<std::size_t>(std::count_if(
      cases.begin(), cases.end(), [status](const card_case& c) { return c.status == status; }));
}

card_comparison compare_cards(const std::vector<loaded_run>& a, const std::vector<loaded_run>& b,
                              const std::string& a_source, const std::string& b_source,
                              const card_comparison_options& options) {
  if (!(options.threshold >= 0.0 && options.threshold < 1.0)) {
    BLASTER_INPUT_ERROR("threshold {} is not in [0, 1): give it as a fraction, 0.1 for 10%",
                        options.threshold);
  }
  card_comparison out{.a_card = card_of(a, "A", a_source),
                      .b_card = card_of(b, "B", b_source),
                      .a_source = a_source,
                      .b_source = b_source,
                      .threshold = options.threshold};
  if (out.a_card == out.b_card) {
    BLASTER_INPUT_ERROR(
        "A ({}) and B ({}) are both {}: --across-cards compares two cards' numbers; give each "
        "side the bundle or home of another GPU model, or compare runs of one card with `blaster "
        "compare A B`",
        a_source, b_source, out.a_card);
  }
  const auto in_a = index_cases(a, "A");
  const auto in_b = index_cases(b, "B");
  for (const auto& run : a) {
    const auto other = in_b.find(key_of(run.report));
    if (other == in_b.end()) {
      out.only_a.push_back(run.report.task + " " + run.report.timed_case);
      continue;
    }
    out.cases.push_back(compare_case(run, *other->second, out.a_card, out.b_card, out.threshold));
  }
  for (const auto& run : b) {
    if (!in_a.contains(key_of(run.report))) {
      out.only_b.push_back(run.report.task + " " + run.report.timed_case);
    }
  }
  if (out.cases.empty()) {
    auto cases = [](const std::vector<loaded_run>& runs) {
      std::vector<std::string> names;
      for (const auto& run : runs) names.push_back(run.report.task + " " + run.report.timed_case);
      return fmt::format("{}", fmt::join(names, ", "));
    };
    BLASTER_INPUT_ERROR(
        "A ({}, {}) and B ({}, {}) have no case in common: A has {}; B has {}; run the same "
        "suite on both cards",
        a_source, out.a_card, b_source, out.b_card, cases(a), cases(b));
  }
  return out;
}

json to_json(const card_comparison& c) {
  json cases = json::array();
  for (const auto& k : c.cases) {
    cases.push_back({{"task", k.task},
                     {"case", k.case_name},
                     {"shape", k.shape},
                     {"dtype", k.dtype},
                     {"mode", k.mode},
                     {"status", to_string(k.status)},
                     {"bound", k.bound ? json(to_string(*k.bound)) : json()},
                     {"bound_from", k.bound_from},
                     {"a", side_json(k.a)},
                     {"b", side_json(k.b)},
                     {"time_ratio", ratio_json(k.time_ratio)},
                     {"ceiling_ratio", ratio_json(k.ceiling_ratio)},
                     {"departure", ratio_json(k.departure)},
                     {"note", k.note},
                     {"hint", k.hint}});
  }
  return {{"a", {{"card", c.a_card}, {"source", c.a_source}}},
          {"b", {{"card", c.b_card}, {"source", c.b_source}}},
          {"threshold", c.threshold},
          {"cases", cases},
          {"only_a", c.only_a},
          {"only_b", c.only_b},
          {"departs", c.count(card_agreement::departs)}};
}

card_comparison card_comparison_from_json(const json& j) {
  card_comparison c;
  c.a_card = j.at("a").value("card", "");
  c.a_source = j.at("a").value("source", "");
  c.b_card = j.at("b").value("card", "");
  c.b_source = j.at("b").value("source", "");
  c.threshold = j.value("threshold", 0.1);
  c.only_a = j.value("only_a", std::vector<std::string>());
  c.only_b = j.value("only_b", std::vector<std::string>());
  for (const auto& k : j.at("cases")) {
    card_case x;
    x.task = k.value("task", "");
    x.case_name = k.value("case", "");
    x.shape = k.value("shape", "");
    x.dtype = k.value("dtype", "");
    x.mode = k.value("mode", "");
    x.status =
        card_agreement_from_string(k.value("status", "")).value_or(card_agreement::not_compared);
    if (k.contains("bound") && k["bound"].is_string()) {
      x.bound = bound_from_string(k["bound"].get<std::string>());
    }
    x.bound_from = k.value("bound_from", "");
    x.a = side_from_json(k.value("a", json()));
    x.b = side_from_json(k.value("b", json()));
    x.time_ratio = ratio_from_json(k.value("time_ratio", json()));
    x.ceiling_ratio = ratio_from_json(k.value("ceiling_ratio", json()));
    x.departure = ratio_from_json(k.value("departure", json()));
    x.note = k.value("note", "");
    x.hint = k.value("hint", "");
    c.cases.push_back(std::move(x));
  }
  return c;
}

}  // namespace blaster
