#pragma once

// Which session and machine measured each case of a portfolio. A portfolio spans as many GPU
// sessions as it needs (shards, --recorded, merged homes), so a reviewer reads from the bundle
// which one measured each case: the report's rows state it, and `blaster verify` computes it
// again from each run bundle's run.json, which holds the same rows as the store.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/bundle_verifier.hpp"
#include "portfolio/portfolio_runner.hpp"

namespace blaster {

class store;

// {"session", "host", "device_fingerprint", "gpu", "gpu_uuid", "blaster_revision", "started_at",
// "finished_at"} from the rows of one run ({"runs": [...], "device_fingerprints": [...]}, as
// run_catalog::records_of returns them and a run bundle's run.json holds them) and the revision
// its report names. The session is the process that ran it ("HOST PID START": the host's name as
// a digest, the process id and its start in clock ticks after boot), which the cases of one
// `blaster portfolio` share; a run recorded before runs kept their process has none (null), nor
// a host then.
nlohmann::json run_provenance(const nlohmann::json& run_rows, const std::string& revision);

// Each outcome's run_provenance, by run id, from the store that recorded it.
std::map<std::int64_t, nlohmann::json> portfolio_provenance(
    store& records, const std::vector<portfolio_outcome>& outcomes);

// The report's section "Who measured each case": the sessions in the order of their first case,
// each with its host, GPU, harness revision, first start and last finish, and its cases. Empty
// where no row states its provenance.
std::string provenance_markdown(const nlohmann::json& summary);

// For each row of results.json that states "measured_by", a claim problem where it is not
// run_provenance of the rows in its run bundle's run.json.
void check_provenance_claims(bundle_verification& verification, const nlohmann::json& summary);

}  // namespace blaster
