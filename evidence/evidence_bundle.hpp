#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "evidence/sha256sums.hpp"
#include "evidence/signature.hpp"
#include "evidence/store.hpp"

namespace blaster {

// The manifest and its signature, at the top of every bundle.
inline constexpr std::string_view bundle_manifest_name = "SHA256SUMS";
inline constexpr std::string_view bundle_signature_name = "SHA256SUMS.sig";
// "ed25519 <sha256 of the public key>": which key signed, so that verify can name the key to
// check with. Unlisted like the signature, and only a hint until the signature is checked.
inline constexpr std::string_view bundle_signer_name = "SHA256SUMS.signer";

struct bundle_export {
  std::filesystem::path dir;
  std::int64_t run_id = 0;
  std::vector<std::string> files;  // as SHA256SUMS lists them
  std::size_t objects = 0;
  std::uint64_t total_bytes = 0;
  std::string signer_sha256;  // the public key's digest when signed, else empty
};

// Writes the evidence bundle of one run into `out`, a folder that must not exist yet (or be
// empty):
//   report.md       the run for a human: task, device, protocol, each candidate's verdict
//   results.json    the run's report JSON, byte for byte the CAS object runs.report_sha256
//                   (the rows of the run, when it recorded no report)
//   run.json        every database row of the run (run_catalog::records_of)
//   objects/<sha256> every CAS object those rows cite, verified by rehashing
//   SHA256SUMS      every file above, in the format `sha256sum -c` reads
//   SHA256SUMS.sig  with a signing key: its Ed25519 signature of SHA256SUMS
//   SHA256SUMS.signer  with a signing key: the key's fingerprint
// The bundle appears whole or not at all: it is written beside `out` and renamed into place,
// and the hidden folders of exports that were killed there are removed. A run still 'running'
// or 'interrupted' is an input_error unless `allow_incomplete`.
// An unknown run or an unusable `out` is an input_error; a cited object the store lacks, or one
// whose bytes no longer match its name, is a blaster::error naming it.
// With `shared_objects`, the objects/ folder of a bundle that holds several runs (a portfolio's,
// a trajectory's), the objects go there instead, each once for all the runs: a task's cubins
// serve every case. The run's SHA256SUMS then lists its own three files, the enclosing bundle's
// lists the objects, and its report.md names the folder.
bundle_export export_bundle(store& records, std::int64_t run_id, const std::filesystem::path& out,
                            const ed25519_key* signing_key, bool allow_incomplete = false,
                            const std::filesystem::path& shared_objects = {});

// Writes any bundle into `out`, a new folder or an empty one (its parent must exist), whole or
// not at all: `fill` writes the bundle's files into the folder it is given, a hidden one beside
// `out`; then SHA256SUMS lists every file there, SHA256SUMS.sig is its signature with a key, and
// the folder is renamed into place. An unusable `out` or a public key is an input_error, raised
// before `fill` runs.
struct bundle_written {
  std::filesystem::path dir;               // `out`, normalized
  std::vector<sha256sums_entry> manifest;  // SHA256SUMS, by path
};
bundle_written write_bundle(const std::filesystem::path& out,
                            const std::function<void(const std::filesystem::path& folder)>& fill,
                            const ed25519_key* signing_key);

}  // namespace blaster
