#include "evidence/run_markdown.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "evidence/stored_results_table.hpp"
#include "evidence/table_renderer.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

// The member, or null when `j` is not an object or lacks it: the report may be any JSON.
const json& member(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  const auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

const json& first_row(const json& records, const char* table) {
  static const json null_value;
  const json& rows = member(records, table);
  return rows.is_array() && !rows.empty() ? rows.front() : null_value;
}

// A Markdown table cell, "-" where there is nothing to show.
std::string cell(std::string_view text) {
  std::string out = markdown_cell(text);
  return out.empty() ? "-" : out;
}

std::string text(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return {};
  return j.dump();
}

std::string device_line(const json& records, const json& report) {
  const json& fingerprint = first_row(records, "device_fingerprints");
  json device = member(report, "device");
  if (!fingerprint.is_null()) device = fingerprint;
  if (device.is_null()) {
    const json& run = first_row(records, "runs");
    const std::string device_json = text(member(run, "device_json"));
    device = json::parse(device_json, nullptr, /*allow_exceptions=*/false);
  }
  const std::string name = text(member(device, "name"));
  if (name.empty()) return "none recorded (no GPU, or the run ended before it was queried)";
  std::string line = name;
  const std::string arch = text(member(device, "arch"));
  const json& sms = member(device, "sm_count");
  std::vector<std::string> details;
  if (!arch.empty()) details.push_back(arch);
  if (sms.is_number_integer()) details.push_back(fmt::format("{} SMs", sms.get<std::int64_t>()));
  const json& driver = member(device, "driver_version");
  if (driver.is_number_integer()) {
    const auto v = driver.get<std::int64_t>();
    details.push_back(fmt::format("driver {}.{}", v / 1000, v % 1000 / 10));
  } else if (driver.is_string()) {
    details.push_back("driver " + driver.get<std::string>());
  }
  if (!details.empty()) line += " (" + fmt::format("{}", fmt::join(details, ", ")) + ")";
  return line;
}

}  // namespace

std::string render_run_markdown(const run_markdown_input& in) {
  const json& records = in.records;
  const json& report = in.report;
  const json& run = first_row(records, "runs");
  const json run_device = json::parse(text(member(run, "device_json")), nullptr, false);
  std::string out;
  const std::string task = text(member(run, "task"));
  out += fmt::format("# blaster run {}{}\n\n", text(member(run, "id")),
                     task.empty() ? "" : ": " + task);
  if (const std::string title = text(member(first_row(records, "tasks"), "title"));
      !title.empty()) {
    out += title + "\n\n";
  }

  out += "| | |\n|---|---|\n";
  auto row = [&out](std::string_view key, const std::string& value) {
    out += fmt::format("| {} | {} |\n", key, cell(value));
  };
  row("command", fmt::format("`{}`", text(member(run, "command"))));
  row("status", text(member(run, "status")));
  row("started", text(member(run, "started_at")));
  row("finished", text(member(run, "finished_at")));
  row("device", device_line(records, report));
  std::string nvrtc = text(member(first_row(records, "device_fingerprints"), "nvrtc_version"));
  if (nvrtc.empty()) nvrtc = text(member(run_device, "nvrtc"));
  row("NVRTC", nvrtc);
  // Runs recorded before the revision was kept have none.
  if (const std::string revision = text(member(run_device, "blaster_revision"));
      !revision.empty()) {
    row("blaster revision", revision);
  }
  row("architecture", text(member(first_row(records, "compilations"), "arch")));
  if (!in.results.empty() && !in.results.front().case_name.empty()) {
    const std::string case_name = in.results.front().case_name;
    std::string shape;
    for (const json& c : member(records, "task_cases")) {
      if (text(member(c, "name")) == case_name) shape = text(member(c, "shape"));
    }
    const std::string dtype = text(member(report, "dtype"));
    row("case", fmt::format("{}{}{}", case_name, shape.empty() ? "" : " (" + shape + ")",
                            dtype.empty() ? "" : ", " + dtype));
  }
  const json& measurement = first_row(records, "measurements");
  if (measurement.is_object()) {
    const json protocol =
        json::parse(text(member(measurement, "protocol_json")), nullptr, /*allow_exceptions=*/false);
    row("timing",
        fmt::format("{}, median per launch; samples of ~{} ms until the relative noise is at "
                    "most {} ({} to {} samples)",
                    text(member(measurement, "mode")), text(member(protocol, "target_sample_ms")),
                    text(member(protocol, "max_noise")), text(member(protocol, "min_samples")),
                    text(member(protocol, "max_samples"))));
  }
  if (const json& copy = member(run_device, "copy_bandwidth_gbs"); copy.is_number()) {
    row("copy bandwidth",
        fmt::format("{:.1f} GB/s, measured by blaster on the device", copy.get<double>()));
  }
  if (const std::string seed = text(member(report, "seed")); !seed.empty()) row("seed", seed);
  if (const std::string why = text(member(report, "gpu_unavailable")); !why.empty()) {
    row("no GPU", why);
  }

  out += "\n## Candidates\n\n";
  if (in.results.empty()) {
    out += "The run recorded no results.\n";
  } else {
    std::ostringstream table;
    make_renderer("md")->render(stored_results_table(in.results, in.metrics, /*console=*/true),
                                table);
    out += table.str();
    const bool any_baseline = std::any_of(in.results.begin(), in.results.end(),
                                          [](const stored_result& r) { return r.baseline; });
    if (any_baseline) out += "\n\\* the baseline: speedups are its time over each candidate's.\n";
  }

  out += "\n## Evidence\n\n";
  const std::string report_sha256 = text(member(run, "report_sha256"));
  if (report_sha256.empty()) {
    out += "The run recorded no report; `results.json` holds its database rows instead.\n";
  } else {
    out += fmt::format(
        "`results.json` is the run's report exactly as the store recorded it (SHA-256 `{}`).\n",
        report_sha256);
  }
  out += fmt::format(
      "`run.json` holds every database row of the run. `{}` holds each object those rows cite, "
      "named by its SHA-256{}.\n\n",
      in.objects_folder,
      in.objects_folder == "objects/" ? "" : ", beside the other runs' objects of this bundle");
  if (!in.objects.empty()) {
    out += "| object | bytes | cited by |\n|---|---:|---|\n";
    for (const auto& o : in.objects) {
      out += fmt::format("| `{}` | {} | {} |\n", o.sha256, o.size_bytes,
                         cell(fmt::format("{}", fmt::join(o.cited_by, "; "))));
    }
  }

  out += "\n## Checking this bundle\n\nIn this folder:\n\n";
  out += "    sha256sum -c SHA256SUMS\n    blaster verify .\n";
  if (in.is_signed) {
    out +=
        "\n`SHA256SUMS.sig` is an Ed25519 signature of `SHA256SUMS`; with the signer's public "
        "key:\n\n    blaster verify . --pubkey KEY.pub\n"
        "    openssl pkeyutl -verify -pubin -inkey KEY.pub -rawin -in SHA256SUMS -sigfile "
        "SHA256SUMS.sig\n";
  }
  return out;
}

}  // namespace blaster
