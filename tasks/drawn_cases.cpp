#include "tasks/drawn_cases.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "tasks/detail/symbol_ranges.hpp"

namespace blaster {
namespace {

using detail::allowed_values;
using detail::wanted_values;

// splitmix64 and integer arithmetic only: the standard library's distributions differ between
// implementations, and a drawn case's name must rebuild the same shape on every machine.
class draw_stream {
 public:
  explicit draw_stream(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
  }

  // Uniform over [low, high] (low >= 0); draws past the last whole span are redrawn, so no
  // value is favoured.
  std::int64_t uniform(std::int64_t low, std::int64_t high) {
    const auto span = static_cast<std::uint64_t>(high - low) + 1;
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                std::numeric_limits<std::uint64_t>::max() % span;
    std::uint64_t r = next();
    while (r >= limit) r = next();
    return low + static_cast<std::int64_t>(r % span);
  }

  // Over [low, high] with every bit length equally likely: sizes spread over orders of
  // magnitude, most of them small, so that the cases stay cheap.
  std::int64_t log_uniform(std::int64_t low, std::int64_t high) {
    const auto width = [](std::int64_t v) {
      return static_cast<std::int64_t>(std::bit_width(static_cast<std::uint64_t>(v)));
    };
    const std::int64_t bits = uniform(width(low), width(high));
    if (bits == 0) return 0;
    const std::int64_t first = std::int64_t{1} << (bits - 1);
    const std::int64_t last = first - 1 + first;
    return uniform(std::max(low, first), std::min(high, last));
  }

 private:
  std::uint64_t state_;
};

// FNV-1a.
std::uint64_t name_hash(std::string_view name) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
  return h;
}

// A drawn case before its symbols are realized: the values it asks for and why each was chosen.
struct plan {
  wanted_values wanted;
  std::map<std::string, std::string, std::less<>> why;
  std::int64_t budget = 0;  // [bytes] its buffers may hold
};

class drawer {
 public:
  drawer(const task_spec& task, std::uint64_t seed)
      : task_(task),
        seed_(seed),
        order_(detail::range_order(task)),
        // A stream of its own (the run's seed also seeds the inputs), and another per task, so
        // that one run draws different shapes for tasks of the same form.
        rng_(seed ^ 0x64726177'6E636173ULL ^ name_hash(task.name)),
        small_(std::min(drawn_case_bytes, task.drawn_max_bytes)),
        large_(task.drawn_max_bytes) {
    for (const symbol_spec* s : order_) {
      if (detail::ranged_reads(task_, *s->range).empty()) free_.push_back(s);
    }
  }

  std::vector<task_case> draw() {
    std::vector<plan> plans;
    plan smallest{.wanted = {}, .why = {}, .budget = large_};
    for (const symbol_spec* s : order_) smallest.why[s->name] = "its least";
    plans.push_back(smallest);

    std::vector<plan> awkward;
    for (const auto& [s, value, why] : awkward_demands()) place(awkward, *s, value, why, small_);
    for (auto& p : awkward) fill(p, /*uniform=*/false);
    plans.insert(plans.end(), awkward.begin(), awkward.end());

    std::vector<plan> largest;
    for (const symbol_spec* s : free_) {
      const allowed_values a = allowed_alone(*s);
      if (fits({{s->name, a.high}}, large_)) {
        place(largest, *s, a.high, "its most", large_);
      } else if (const auto top = largest_fitting({}, *s, large_)) {
        place(largest, *s, *top,
              fmt::format("the most that fits drawn.max_bytes (its most is {})", a.high), large_);
      }
    }
    for (auto& p : largest) {
      // The others grow only as far as the cheap cases do, or the largest already holds.
      p.budget = std::max(small_, bytes(p.wanted));
      fill(p, /*uniform=*/false);
    }
    plans.insert(plans.end(), largest.begin(), largest.end());

    for (std::size_t i = 0; i < drawn_uniform_cases; ++i) {
      plan p{.wanted = {}, .why = {}, .budget = small_};
      fill(p, /*uniform=*/true);
      plans.push_back(p);
    }
    return realize_all(plans);
  }

 private:
  struct demand {
    const symbol_spec* symbol;
    std::int64_t value;
    std::string why;
  };

  [[nodiscard]] std::optional<task_case> realized(const wanted_values& w) const {
    return detail::realize(task_, order_, w);
  }

  [[nodiscard]] bool fits(const wanted_values& w, std::int64_t budget) const {
    const auto c = realized(w);
    return c && !detail::drawn_case_problem(task_, *c, budget, drawn_case_flops);
  }

  [[nodiscard]] std::int64_t bytes(const wanted_values& w) const {
    const auto c = realized(w);
    return c ? detail::case_bytes(task_, *c) : 0;
  }

  // What symbol s may take in the case `w` asks for, given the symbols before it there.
  [[nodiscard]] std::optional<allowed_values> allowed_in(const wanted_values& w,
                                                         const symbol_spec& s) const {
    const auto c = realized(w);
    if (!c) return std::nullopt;
    return detail::allowed(*s.range, task_.integer_symbols(*c));
  }

  // A free symbol's values: the same in every case, since its bounds read no ranged symbol.
  [[nodiscard]] allowed_values allowed_alone(const symbol_spec& s) const {
    return *allowed_in({}, s);
  }

  // The largest value of s that keeps case `w` within `budget` (the symbols it does not name at
  // their least); nullopt where even the least does not fit. Bytes grow with every size, so a
  // bisection finds it.
  [[nodiscard]] std::optional<std::int64_t> largest_fitting(const wanted_values& w,
                                                            const symbol_spec& s,
                                                            std::int64_t budget) const {
    const auto a = allowed_in(w, s);
    if (!a || a->low > a->high) return std::nullopt;
    auto with = [&](std::int64_t k) {
      wanted_values trial = w;
      trial[s.name] = k * a->step;
      return fits(trial, budget);
    };
    std::int64_t lo = a->low / a->step;
    std::int64_t hi = a->high / a->step;
    if (!with(lo)) return std::nullopt;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (with(mid)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo * a->step;
  }

  // The multiples of the range's step in [3P/4, P - 1] and in the range, as [first, last] in
  // steps; first > last where there is none.
  [[nodiscard]] static std::pair<std::int64_t, std::int64_t> quarter(const allowed_values& a,
                                                                     std::int64_t power) {
    return {std::max((3 * power / 4 + a.step - 1) / a.step, a.low / a.step),
            std::min((power - 1) / a.step, a.high / a.step)};
  }

  // One of those, drawn; nullopt where there is none.
  std::optional<std::int64_t> quarter_value(const allowed_values& a, std::int64_t power) {
    const auto [first, last] = quarter(a, power);
    if (first > last) return std::nullopt;
    return rng_.uniform(first, last) * a.step;
  }

  // The awkward sizes of each free symbol, class by class, so that one class's values for
  // several symbols can share a case.
  std::vector<demand> awkward_demands() {
    std::vector<demand> demands;
    for (const std::int64_t units : {1, 31, 33}) {
      for (const symbol_spec* s : free_) {
        const allowed_values a = allowed_alone(*s);
        const std::int64_t v = units * a.step;
        if (v < a.low || v > a.high) continue;
        demands.push_back({s, v,
                           a.step == 1 ? fmt::format("{}", units)
                                       : fmt::format("{} times its multiple {}", units, a.step)});
      }
    }
    // Per symbol: the powers of two (from 64; 31 and 33 stand for the smaller ones) whose upper
    // quarter the range reaches; 1024, the largest, and one more drawn.
    std::vector<std::vector<std::int64_t>> chosen(free_.size());
    for (std::size_t i = 0; i < free_.size(); ++i) {
      const allowed_values a = allowed_alone(*free_[i]);
      std::vector<std::int64_t> powers;
      for (std::int64_t p = 64; p <= (std::int64_t{1} << 62); p *= 2) {
        if (3 * (p / 4) > a.high) break;
        if (const auto [first, last] = quarter(a, p); first <= last) powers.push_back(p);
      }
      if (powers.empty()) continue;
      if (std::find(powers.begin(), powers.end(), 1024) != powers.end()) chosen[i].push_back(1024);
      if (powers.back() != 1024) chosen[i].push_back(powers.back());
      std::vector<std::int64_t> rest;
      for (std::int64_t p : powers) {
        if (std::find(chosen[i].begin(), chosen[i].end(), p) == chosen[i].end()) rest.push_back(p);
      }
      if (!rest.empty()) {
        chosen[i].push_back(rest[static_cast<std::size_t>(
            rng_.uniform(0, static_cast<std::int64_t>(rest.size()) - 1))]);
      }
    }
    for (std::size_t round = 0; round < 3; ++round) {
      for (std::size_t i = 0; i < free_.size(); ++i) {
        if (round >= chosen[i].size()) continue;
        const symbol_spec& s = *free_[i];
        const allowed_values a = allowed_alone(s);
        // Where the quarter is too large for a cheap case even alone, the next power down's.
        for (std::int64_t p = chosen[i][round]; p >= 64; p /= 2) {
          const auto v = quarter_value(a, p);
          if (v && fits({{s.name, *v}}, small_)) {
            demands.push_back({&s, *v, fmt::format("in the upper quarter below {}", p)});
            break;
          }
        }
      }
    }
    return demands;
  }

  // First fit: into the first case that does not name s yet and still fits its budget with it,
  // else a case of its own (dropped where even that does not fit).
  void place(std::vector<plan>& plans, const symbol_spec& s, std::int64_t value,
             const std::string& why, std::int64_t budget) {
    for (auto& p : plans) {
      if (p.wanted.contains(s.name)) continue;
      wanted_values trial = p.wanted;
      trial[s.name] = value;
      if (fits(trial, p.budget)) {
        p.wanted = std::move(trial);
        p.why[s.name] = why;
        return;
      }
    }
    plan p{.wanted = {{s.name, value}}, .why = {{s.name, why}}, .budget = budget};
    if (fits(p.wanted, budget)) plans.push_back(std::move(p));
  }

  // Draws the symbols p does not name: the free ones in an order drawn from the seed, then those
  // whose bounds read others, after what they read; each within what still fits p's budget.
  void fill(plan& p, bool uniform) {
    std::vector<const symbol_spec*> open;
    for (const symbol_spec* s : free_) {
      if (!p.wanted.contains(s->name)) open.push_back(s);
    }
    for (std::size_t i = open.size(); i > 1; --i) {
      std::swap(open[i - 1],
                open[static_cast<std::size_t>(rng_.uniform(0, static_cast<std::int64_t>(i) - 1))]);
    }
    for (const symbol_spec* s : order_) {
      if (!p.wanted.contains(s->name) && std::find(free_.begin(), free_.end(), s) == free_.end()) {
        open.push_back(s);
      }
    }
    for (const symbol_spec* s : open) {
      const auto top = largest_fitting(p.wanted, *s, p.budget);
      if (!top) {
        p.why[s->name] = "its least";
        continue;
      }
      const allowed_values a = *allowed_in(p.wanted, *s);
      const std::int64_t k = uniform ? rng_.uniform(a.low / a.step, *top / a.step)
                                     : rng_.log_uniform(a.low / a.step, *top / a.step);
      p.wanted[s->name] = k * a.step;
      p.why[s->name] = uniform ? "uniform" : "drawn";
    }
  }

  std::vector<task_case> realize_all(const std::vector<plan>& plans) const {
    std::vector<task_case> cases;
    for (const auto& p : plans) {
      auto c = realized(p.wanted);
      // Each plan was checked as it grew; a shape whose bytes shrink as a size grows could
      // still slip past the bisection, and is dropped rather than run.
      if (!c || detail::drawn_case_problem(task_, *c, p.budget, drawn_case_flops)) continue;
      const bool seen = std::any_of(cases.begin(), cases.end(), [&](const task_case& other) {
        return other.values == c->values;
      });
      if (seen) continue;
      std::vector<std::string> parts;
      for (const symbol_spec* s : order_) {
        const auto why = p.why.find(s->name);
        parts.push_back(fmt::format("{} {}", s->name, why == p.why.end() ? "drawn" : why->second));
      }
      c->name = drawn_case_name(seed_, cases.size());
      c->note = fmt::format("drawn from seed {}: {}", seed_, fmt::join(parts, "; "));
      cases.push_back(std::move(*c));
    }
    return cases;
  }

  const task_spec& task_;
  std::uint64_t seed_;
  std::vector<const symbol_spec*> order_;
  std::vector<const symbol_spec*> free_;  // ranged symbols whose bounds read no ranged symbol
  draw_stream rng_;
  std::int64_t small_;  // [bytes] a case other than a symbol's largest may hold
  std::int64_t large_;  // [bytes] the task's drawn.max_bytes
};

}  // namespace

std::vector<task_case> draw_cases(const task_spec& task, std::uint64_t seed) {
  if (task.drawn_max_bytes == 0) return {};
  return drawer(task, seed).draw();
}

namespace {

void add_new(task_spec& task, std::vector<task_case> cases) {
  for (auto& c : cases) {
    const bool known = std::any_of(task.cases.begin(), task.cases.end(),
                                   [&](const task_case& other) { return other.name == c.name; });
    if (!known) task.cases.push_back(std::move(c));
  }
}

}  // namespace

void add_drawn_cases(task_spec& task, std::uint64_t seed) { add_new(task, draw_cases(task, seed)); }

void add_drawn_cases_named(task_spec& task, std::string_view name) {
  add_new(task, drawn_cases_named(task, name));
}

std::string drawn_case_name(std::uint64_t seed, std::size_t index) {
  return fmt::format("{}{}:{}", drawn_case_prefix, seed, index);
}

bool is_drawn_case_name(std::string_view name) { return name.starts_with(drawn_case_prefix); }

std::vector<task_case> drawn_cases_named(const task_spec& task, std::string_view name) {
  auto malformed = [&] {
    BLASTER_INPUT_ERROR(
        "\"{:.80}\" is not a drawn case's name; write drawn:SEED (every case a run drew from "
        "SEED, a decimal integer) or drawn:SEED:k (its case k, from 0)",
        name);
  };
  if (!is_drawn_case_name(name)) malformed();
  const std::string_view rest = name.substr(drawn_case_prefix.size());
  const std::size_t colon = rest.find(':');
  const std::string_view seed_text = rest.substr(0, colon);
  std::uint64_t seed = 0;
  const auto [seed_end, seed_error] =
      std::from_chars(seed_text.data(), seed_text.data() + seed_text.size(), seed);
  if (seed_text.empty() || seed_error != std::errc() ||
      seed_end != seed_text.data() + seed_text.size()) {
    malformed();
  }
  if (task.drawn_max_bytes == 0) {
    BLASTER_INPUT_ERROR(
        "task {} states no symbol ranges, so it draws no cases; give its size symbols a "
        "\"range\" and the task \"drawn\": {{\"max_bytes\": N}} in its task.json",
        task.name);
  }
  std::vector<task_case> cases = draw_cases(task, seed);
  if (colon == std::string_view::npos) return cases;
  const std::string_view index_text = rest.substr(colon + 1);
  std::size_t index = 0;
  const auto [index_end, index_error] =
      std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
  if (index_text.empty() || index_error != std::errc() ||
      index_end != index_text.data() + index_text.size()) {
    malformed();
  }
  if (index >= cases.size()) {
    BLASTER_INPUT_ERROR("task {} draws {} cases from seed {} ({} to {}); there is no {}", task.name,
                        cases.size(), seed, drawn_case_name(seed, 0),
                        drawn_case_name(seed, cases.size() - 1), name);
  }
  return {cases[index]};
}

}  // namespace blaster
