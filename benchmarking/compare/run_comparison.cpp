#include "benchmarking/compare/run_comparison.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster {
namespace {

struct status_name {
  comparison_status status;
  std::string_view name;
};

constexpr std::array status_names{
    status_name{comparison_status::fast, "FAST"},
    status_name{comparison_status::slow, "SLOW"},
    status_name{comparison_status::same, "SAME"},
    status_name{comparison_status::inconclusive, "INCONCLUSIVE"},
    status_name{comparison_status::mismatch, "MISMATCH"},
    status_name{comparison_status::only_a, "ONLY_A"},
    status_name{comparison_status::only_b, "ONLY_B"},
    status_name{comparison_status::rejected, "REJECTED"},
    status_name{comparison_status::fixed, "FIXED"},
    status_name{comparison_status::untimed, "UNTIMED"},
};

// A result whose time can be compared: it passed the gate and was timed.
std::optional<double> timed_us(const variant_result& r) {
  if (r.status != "passed" || !r.time_us) return std::nullopt;
  return r.time_us;
}

bool usable(const std::optional<double>& us) { return us && std::isfinite(*us) && *us > 0.0; }

std::string gpu_of(const bench_report& r) { return r.device ? r.device->name : "none"; }

// "rejected (wrong_result: case odd: out[17] = 3.5)", "compiled", ...
std::string outcome_of(const variant_result& r) {
  if (r.status == "passed") return "passed without a positive time";
  if (r.status != "rejected") return r.status.empty() ? "no status" : r.status;
  std::string text = fmt::format("rejected ({}", to_string(r.reason));
  if (!r.message.empty()) text += ": " + r.message;
  return text + ")";
}

// The plural a note uses for a difference: protocol options are all "protocols".
std::string_view category_of(const key_difference& d) {
  if (d.what == "GPU") return "GPUs";
  if (d.what == "shape") return "shapes";
  if (d.what == "dtype") return "dtypes";
  if (d.what == "mode") return "timing modes";
  return "protocols";
}

std::string describe(const std::vector<key_difference>& differences) {
  std::string text;
  for (const auto& d : differences) {
    if (!text.empty()) text += "; ";
    text += fmt::format("{} {} vs {}", d.what, d.a, d.b);
  }
  return text;
}

// Where a result sits on its side: the run it came from and the result itself.
struct side_entry {
  const loaded_run* run = nullptr;
  const variant_result* result = nullptr;
};

std::string key_of(const bench_report& report, const variant_result& r) {
  return report.task + '\0' + report.timed_case + '\0' + r.label;
}

std::map<std::string, side_entry> index_side(const std::vector<loaded_run>& runs,
                                             std::string_view side) {
  std::map<std::string, side_entry> out;
  for (const auto& run : runs) {
    for (const auto& r : run.report.results) {
      const auto [at, inserted] = out.emplace(key_of(run.report, r), side_entry{&run, &r});
      if (!inserted) {
        BLASTER_INPUT_ERROR(
            "{}: {} and {} both hold task {} case {} variant {}; give {} one run of each task "
            "and case",
            side, at->second.run->source, run.source, run.report.task, run.report.timed_case,
            r.label, side);
      }
    }
  }
  return out;
}

comparison_row compare_pair(const side_entry& a, const side_entry& b,
                            const comparison_options& options) {
  comparison_row row{.task = a.run->report.task,
                     .case_name = a.run->report.timed_case,
                     .variant = a.result->label,
                     .a_us = timed_us(*a.result),
                     .b_us = timed_us(*b.result),
                     .differences = key_differences(a.run->report, b.run->report),
                     .a_source = a.run->source,
                     .b_source = b.run->source};
  if (!row.differences.empty() && !options.allow_mismatch) {
    row.status = comparison_status::mismatch;
    row.note = "not compared: " + describe(row.differences);
    return row;
  }
  const bool a_timed = usable(row.a_us);
  const bool b_timed = usable(row.b_us);
  if (a_timed && b_timed) {
    row.ratio = ratio_of(*row.a_us, relative_uncertainty(*a.result, a.run->report.aa), *row.b_us,
                         relative_uncertainty(*b.result, b.run->report.aa));
    row.status = classify(*row.ratio, options.threshold);
  } else if (a_timed && b.result->status == "rejected") {
    row.status = comparison_status::rejected;
    row.note = "B: " + outcome_of(*b.result);
  } else if (a.result->status == "rejected" && b_timed) {
    row.status = comparison_status::fixed;
    row.note = "A: " + outcome_of(*a.result);
  } else {
    row.status = comparison_status::untimed;
    row.note = fmt::format("A: {}, B: {}", a_timed ? "timed" : outcome_of(*a.result),
                           b_timed ? "timed" : outcome_of(*b.result));
  }
  if (!row.differences.empty()) {
    const std::string marked = "compared although " + describe(row.differences);
    row.note = row.note.empty() ? marked : marked + "; " + row.note;
  }
  return row;
}

comparison_row one_side(const side_entry& e, comparison_status status) {
  const bool in_a = status == comparison_status::only_a;
  comparison_row row{.task = e.run->report.task,
                     .case_name = e.run->report.timed_case,
                     .variant = e.result->label,
                     .status = status,
                     .note = fmt::format("only in {} ({})", in_a ? "A" : "B", e.run->source)};
  (in_a ? row.a_us : row.b_us) = timed_us(*e.result);
  (in_a ? row.a_source : row.b_source) = e.run->source;
  return row;
}

// One note per kind of difference: refused pairs say how to compare them, compared ones what
// their ratios then measure.
std::vector<std::string> difference_notes(const std::vector<comparison_row>& rows) {
  std::map<std::string_view, int> refused;
  std::map<std::string_view, int> marked;
  for (const auto& row : rows) {
    std::vector<std::string_view> kinds;
    for (const auto& d : row.differences) kinds.push_back(category_of(d));
    std::sort(kinds.begin(), kinds.end());
    kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
    for (std::string_view kind : kinds) {
      ++(row.status == comparison_status::mismatch ? refused : marked)[kind];
    }
  }
  std::vector<std::string> notes;
  for (const auto& [kind, n] : refused) {
    notes.push_back(fmt::format(
        "not compared although the {} differ: {} pair{} (MISMATCH); numbers measured so do not "
        "mean the same thing; --allow-mismatch compares them and marks each row",
        kind, n, n == 1 ? "" : "s"));
  }
  for (const auto& [kind, n] : marked) {
    notes.push_back(fmt::format(
        "compared although the {} differ (--allow-mismatch): {} row{} marked; their ratios "
        "measure the change of {} as much as any change of the kernels",
        kind, n, n == 1 ? "" : "s", kind));
  }
  return notes;
}

std::string number(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::string_view to_string(comparison_status status) {
  for (const auto& s : status_names) {
    if (s.status == status) return s.name;
  }
  return "UNKNOWN";
}

bool is_regression(comparison_status status) {
  return status == comparison_status::slow || status == comparison_status::rejected;
}

double relative_uncertainty(const variant_result& r, const std::optional<aa_check>& aa) {
  const double fresh_process = aa ? std::abs(aa->ratio - 1.0) : 0.0;
  return std::max({r.max_noise, r.session_spread, fresh_process});
}

ratio_interval ratio_of(double a_us, double a_uncertainty, double b_us, double b_uncertainty) {
  const double r = b_us / a_us;
  const double low = r * std::max(0.0, 1.0 - b_uncertainty) / (1.0 + a_uncertainty);
  const double high = a_uncertainty >= 1.0 ? std::numeric_limits<double>::infinity()
                                           : r * (1.0 + b_uncertainty) / (1.0 - a_uncertainty);
  return {.ratio = r, .low = low, .high = high};
}

comparison_status classify(const ratio_interval& x, double threshold) {
  if (x.low > 1.0 && x.ratio > 1.0 + threshold) return comparison_status::slow;
  if (x.high < 1.0 && x.ratio < 1.0 - threshold) return comparison_status::fast;
  if (x.low >= 1.0 - threshold && x.high <= 1.0 + threshold) return comparison_status::same;
  return comparison_status::inconclusive;
}

std::vector<key_difference> key_differences(const bench_report& a, const bench_report& b) {
  std::vector<key_difference> out;
  auto differ = [&out](std::string what, std::string x, std::string y) {
    if (x != y) out.push_back({std::move(what), std::move(x), std::move(y)});
  };
  differ("GPU", gpu_of(a), gpu_of(b));
  differ("shape", a.timed_shape, b.timed_shape);
  differ("dtype", a.dtype, b.dtype);
  differ("mode", std::string(to_string(a.timing.mode)), std::string(to_string(b.timing.mode)));
  const timing_options& x = a.timing;
  const timing_options& y = b.timing;
  const timing_mode_traits& mode = traits_of(x.mode);
  // A mode that times single launches has no sample length, one that cannot rotate no rotation.
  if (mode.batches_launches) {
    differ("target_sample_ms", number(x.target_sample_ms), number(y.target_sample_ms));
  }
  differ("min_samples", number(x.min_samples), number(y.min_samples));
  differ("max_samples", number(x.max_samples), number(y.max_samples));
  differ("max_noise", number(x.max_noise), number(y.max_noise));
  if (mode.rotates_buffers) {
    differ("rotate_buffers", x.rotate_buffers ? "true" : "false",
           y.rotate_buffers ? "true" : "false");
  }
  differ("min_clock_fraction", number(x.min_clock_fraction), number(y.min_clock_fraction));
  differ("sessions", number(a.sessions), number(b.sessions));
  return out;
}

bool run_comparison::regressed() const {
  return std::any_of(rows.begin(), rows.end(),
                     [](const comparison_row& r) { return is_regression(r.status); });
}

std::size_t run_comparison::count(comparison_status status) const {
  return static_cast<std::size_t>(std::count_if(
      rows.begin(), rows.end(), [status](const comparison_row& r) { return r.status == status; }));
}

run_comparison compare_runs(const std::vector<loaded_run>& a, const std::vector<loaded_run>& b,
                            const comparison_options& options) {
  if (!(options.threshold >= 0.0 && options.threshold < 1.0)) {
    BLASTER_INPUT_ERROR("threshold {} is not in [0, 1): give it as a fraction, 0.02 for 2%",
                        options.threshold);
  }
  const std::map<std::string, side_entry> in_a = index_side(a, "A");
  const std::map<std::string, side_entry> in_b = index_side(b, "B");
  run_comparison out{.rows = {}, .notes = {}, .options = options};
  for (const auto& run : a) {
    for (const auto& r : run.report.results) {
      const side_entry mine{&run, &r};
      const auto other = in_b.find(key_of(run.report, r));
      out.rows.push_back(other == in_b.end() ? one_side(mine, comparison_status::only_a)
                                             : compare_pair(mine, other->second, options));
    }
  }
  for (const auto& run : b) {
    for (const auto& r : run.report.results) {
      if (!in_a.contains(key_of(run.report, r))) {
        out.rows.push_back(one_side({&run, &r}, comparison_status::only_b));
      }
    }
  }
  out.notes = difference_notes(out.rows);
  return out;
}

}  // namespace blaster
