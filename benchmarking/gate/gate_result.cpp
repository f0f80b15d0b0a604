#include "benchmarking/gate/gate_result.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

}  // namespace

json to_json(const check_evidence& e) {
  json canaries = json::array();
  for (const auto& c : e.canaries) {
    canaries.push_back({{"buffer", c.buffer}, {"byte_offset", c.byte_offset}, {"bytes", c.bytes}});
  }
  json inputs = json::array();
  for (const auto& i : e.inputs) {
    json entry = {{"buffer", i.buffer},
                  {"sha256_before", i.sha256_before},
                  {"sha256_after", i.sha256_after}};
    if (i.first_index) {
      entry["first_index"] = *i.first_index;
      entry["differing_elements"] = i.differing_elements;
    }
    inputs.push_back(std::move(entry));
  }
  json out = {{"check", e.check},   {"case", e.case_name},   {"seed", e.seed},
              {"runs", e.runs},     {"canaries", canaries}, {"inputs", inputs}};
  if (const auto& n = e.nondeterministic) {
    out["nondeterministic"] = {{"buffer", n->buffer},
                               {"run", n->run},
                               {"first_index", n->first_index},
                               {"differing_elements", n->differing_elements}};
  }
  return out;
}

check_evidence check_evidence_from_json(const json& j) {
  check_evidence e{.check = j.at("check").get<std::size_t>(),
                   .case_name = j.at("case").get<std::string>(),
                   .seed = j.at("seed").get<std::uint64_t>(),
                   .runs = j.at("runs").get<int>(),
                   .canaries = {},
                   .inputs = {},
                   .nondeterministic = std::nullopt};
  for (const auto& c : j.at("canaries")) {
    e.canaries.push_back({.buffer = c.at("buffer").get<std::string>(),
                          .byte_offset = c.at("byte_offset").get<long long>(),
                          .bytes = c.at("bytes").get<std::size_t>()});
  }
  for (const auto& i : j.at("inputs")) {
    input_check in{.buffer = i.at("buffer").get<std::string>(),
                   .sha256_before = i.at("sha256_before").get<std::string>(),
                   .sha256_after = i.at("sha256_after").get<std::string>(),
                   .first_index = std::nullopt,
                   .differing_elements = 0};
    if (i.contains("first_index")) {
      in.first_index = i["first_index"].get<std::size_t>();
      in.differing_elements = i.at("differing_elements").get<std::size_t>();
    }
    e.inputs.push_back(std::move(in));
  }
  if (j.contains("nondeterministic")) {
    const json& n = j["nondeterministic"];
    e.nondeterministic = run_difference{.buffer = n.at("buffer").get<std::string>(),
                                        .run = n.at("run").get<int>(),
                                        .first_index = n.at("first_index").get<std::size_t>(),
                                        .differing_elements =
                                            n.at("differing_elements").get<std::size_t>()};
  }
  return e;
}

json to_json(const case_check& c) {
  const bool passed = c.reason == reason_code::none;
  json outputs = json::array();
  for (const auto& m : c.outputs) {
    json metrics = to_json(m);
    // A passed check's worst elements are within tolerance and say nothing its quantiles do not;
    // a report of many variants and cases would carry them thousands of times.
    if (passed) metrics.erase("worst");
    outputs.push_back(std::move(metrics));
  }
  json j = {{"case", c.case_name},           {"seed", c.seed},       {"passed", passed},
            {"reason", to_string(c.reason)}, {"message", c.message}, {"outputs", outputs}};
  // A passed check's worker evidence is the CAS object its gate row cites (evidence_sha256).
  if (!passed) j["worker"] = to_json(c.evidence);
  return j;
}

case_check case_check_from_json(const json& j) {
  case_check c{
      .case_name = j.at("case").get<std::string>(),
      .seed = j.at("seed").get<std::uint64_t>(),
      .reason = parse_reason_code(j.at("reason").get<std::string>()).value_or(reason_code::crash),
      .message = j.at("message").get<std::string>(),
      .outputs = {},
      .evidence = j.contains("worker") ? check_evidence_from_json(j["worker"]) : check_evidence{}};
  for (const auto& m : j.at("outputs")) c.outputs.push_back(error_metrics_from_json(m));
  return c;
}

}  // namespace blaster
