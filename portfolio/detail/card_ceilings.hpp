#pragma once

// Which of a card's measured ceilings a case is held to when two cards are compared: the case's
// bound, and the ceiling of that bound each card's run recorded.

#include <optional>
#include <string>

#include "benchmarking/report/bench_report.hpp"
#include "profiling/diagnosis.hpp"

namespace blaster::detail {

struct bound_choice {
  bound_by bound = bound_by::bandwidth;
  std::string from;  // "launch floor", "counters", "counters on the NVIDIA H100", "roofline"
  std::string note;  // where the two cards' counters disagree
};

// Launch-bound where either card's best variant is within the launch-bound factor of its empty
// kernel or the case is timed in graph mode; else the counters' bound where both cards that
// have one agree on bandwidth or compute (latency names no ceiling); else the roofline: compute
// where both cards measured a matrix rate and the case is nearer it than its memory floor on
// either card, bandwidth otherwise.
bound_choice choose_bound(const bench_report& ra, const variant_result& a, const bench_report& rb,
                          const variant_result& b, const std::string& a_card,
                          const std::string& b_card);

struct case_ceiling {
  std::string name;    // "copy bandwidth", "L2 bandwidth", "matrix rate", "graph launch floor"
  double value = 0.0;  // [bytes/s], [flop/s], or [microseconds] for a launch floor
  double uncertainty = 0.0;  // relative: the ceiling's spread, 0 where the run recorded none
};

// The ceiling of `b` that run `r` recorded for its variant `v`: the launch floor of its mode; the
// matrix rate; for bandwidth the ceiling its roofline floor used (of its mix of bytes read and
// written and where its data lives), else the DRAM ceiling of its mix where the run measured the
// read and write ceilings, else the copy bandwidth. None where the run recorded none.
std::optional<case_ceiling> ceiling_for(const bench_report& r, const variant_result& v, bound_by b);

}  // namespace blaster::detail
