#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace blaster {

// The portfolio's figure.svg, drawn from its summary (results.json). A headline with the
// geometric mean of the ratio to the faster PyTorch method; per case, on a log axis with 1.0x
// marked, the faster of PyTorch eager and torch.compile over blaster's best (where the case has
// no PyTorch time, the speedup over the baseline, in another colour), with the speedup's 95%
// interval carried over as whiskers; and how near the case comes to its hardware's limit: the
// percent of the roofline where it is bandwidth-bound, its time over the empty kernel's where it
// is launch-bound. Axes span the data and the canvas grows to hold every label, so nothing is
// clipped. Plain SVG 1.1 (no scripts, no fonts but sans-serif); the same summary gives the same
// bytes. Each panel is a <g class="panel"> whose first child, a <rect class="bounds">, is the
// area its text stays in.
std::string render_portfolio_svg(const nlohmann::json& summary);

}  // namespace blaster
