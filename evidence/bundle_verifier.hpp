#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/signature.hpp"

namespace blaster {

enum class bundle_problem_kind {
  missing,     // listed in SHA256SUMS, not in the folder
  changed,     // its bytes do not hash to the listed digest
  extra,       // in the folder, not listed
  symlink,     // a bundle holds plain files only; a link could point anywhere
  not_a_file,  // a FIFO, socket or device where a file should be
  unreadable,  // the file or folder could not be read
  too_large,   // larger than the limit verify hashes (--max-file-bytes)
  manifest,    // SHA256SUMS itself is missing or malformed
  signature,   // SHA256SUMS.sig does not verify, or --pubkey was given and there is none
  claim,       // a number the report states is not the one its cited source holds
};

std::string_view name_of(bundle_problem_kind kind);

struct bundle_problem {
  bundle_problem_kind kind;
  std::string path;  // relative to the bundle
  std::string detail;
  std::string expected_sha256;  // for changed
  std::string actual_sha256;    // for changed
};

enum class signature_status {
  absent,     // no SHA256SUMS.sig and no key asked for one
  valid,      // verifies under the given public key
  invalid,    // does not verify, or is not a 64-byte signature
  unchecked,  // present, and the user allowed it to stay unchecked (no public key given)
  missing,    // a public key was given and there is no SHA256SUMS.sig
};

std::string_view name_of(signature_status status);

struct bundle_verification {
  std::filesystem::path dir;
  std::size_t files_listed = 0;
  std::size_t files_matched = 0;
  std::vector<bundle_problem> problems;  // in path order
  signature_status signature = signature_status::absent;
  std::string signer_sha256;        // the public key's digest, when one was given
  std::string named_signer_sha256;  // the fingerprint SHA256SUMS.signer names, if any
  bool ok() const { return problems.empty(); }
};

// Checks a bundle: every file SHA256SUMS lists is there and hashes to its digest, nothing else
// is there (but SHA256SUMS.sig), no symbolic link or special file is anywhere inside, and, with a
// public key, SHA256SUMS.sig is its signature of SHA256SUMS. Every problem is reported, each by
// path; none stops the others from being found. Only a `dir` that is not a folder is an
// input_error. A signature with no key to check it is a problem unless
// `allow_unchecked_signature`; then its status says unchecked.
// A listed file larger than `max_file_bytes` is a problem, never hashed: a bundle cannot make
// verify read a terabyte (a sparse file costs its maker nothing).
inline constexpr std::uint64_t default_max_bundle_file_bytes = std::uint64_t{4} << 30;
bundle_verification verify_bundle(const std::filesystem::path& dir, const ed25519_key* public_key,
                                  bool allow_unchecked_signature = false,
                                  std::uint64_t max_file_bytes = default_max_bundle_file_bytes);

// The run bundles inside `bundle`, each a folder with a run.json, relative to it ("" for the bundle
// itself, as `blaster export` writes it), in path order.
std::vector<std::string> run_bundle_folders(const std::filesystem::path& bundle);

// Holds every run bundle inside `verification.dir` (each folder with a run.json, the bundle itself
// included) to its records, and appends a problem for each that does not hold: each object
// run.json cites is a file named by its digest, in the run's objects/ or in the enclosing
// bundle's (where a portfolio keeps its runs' objects), and hashes to that name; the report the
// run cites is its results.json. A bundle that leaves out an object, from its files and its
// SHA256SUMS alike, fails here. A file over `max_file_bytes` is left to verify_bundle.
void check_run_records(bundle_verification& verification,
                       std::uint64_t max_file_bytes = default_max_bundle_file_bytes);

}  // namespace blaster
