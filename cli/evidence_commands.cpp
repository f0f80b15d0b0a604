// blaster export RUN --out DIR, blaster verify DIR, blaster keygen --out PREFIX: evidence bundles
// that a reviewer checks without trusting whoever published them.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "benchmarking/compare/remeasure.hpp"
#include "cli/cli_context.hpp"
#include "cli/commands.hpp"
#include "cli/error_report.hpp"
#include "cli/store_access.hpp"
#include "core/error.hpp"
#include "evidence/bundle_verifier.hpp"
#include "evidence/evidence_bundle.hpp"
#include "evidence/signature.hpp"
#include "optimize/trajectory_claims.hpp"
#include "portfolio/portfolio_report.hpp"

namespace blaster::cli {
namespace {

std::string interval_text(const std::optional<interval>& x) {
  return x ? fmt::format("[{:.3f}, {:.3f}]", x->low, x->high) : "-";
}

nlohmann::json remeasure_json(const bundle_remeasure& r) {
  nlohmann::json claims = nlohmann::json::array();
  for (const auto& c : r.claims) {
    nlohmann::json item = {{"run", c.run},
                           {"command", c.command},
                           {"task", c.task},
                           {"case", c.case_name},
                           {"variant", c.variant},
                           {"status", to_string(c.status)},
                           {"note", c.note},
                           {"recorded_us", c.recorded_us},
                           {"recorded_uncertainty", c.recorded_uncertainty}};
    auto put_interval = [&](const char* key, const std::optional<interval>& x) {
      if (x) item[key] = {{"low", x->low}, {"high", x->high}, {"point", x->point}};
    };
    put_interval("recorded_speedup", c.recorded_speedup);
    put_interval("fresh_speedup", c.fresh_speedup);
    if (c.fresh_us) {
      item["fresh_us"] = *c.fresh_us;
      item["fresh_uncertainty"] = c.fresh_uncertainty;
    }
    if (c.time_ratio) {
      item["time_ratio"] = {
          {"ratio", c.time_ratio->ratio}, {"low", c.time_ratio->low}, {"high", c.time_ratio->high}};
    }
    if (c.fresh_run_id != 0) item["fresh_run_id"] = c.fresh_run_id;
    claims.push_back(std::move(item));
  }
  return {{"seed", r.seed},         {"gpu", r.gpu}, {"claims_available", r.claims_available},
          {"rule", remeasure_rule}, {"ok", r.ok()}, {"claims", claims}};
}

void print_remeasure(const bundle_remeasure& r) {
  fmt::print("remeasured on {}: {} of {} timed candidates, drawn with seed {} (--remeasure-seed)\n",
             r.gpu, r.claims.size(), r.claims_available, r.seed);
  for (std::size_t i = 0; i < r.claims.size(); ++i) {
    const remeasured_claim& c = r.claims[i];
    fmt::print("  {}. {}  {} {} {}  ({}{}{})\n", i + 1, to_string(c.status), c.task, c.case_name,
               c.variant, c.run, c.command.empty() ? "" : ": ", c.command);
    fmt::print("     recorded {:.4g} us +-{:.2f}%, speedup {}\n", c.recorded_us,
               100.0 * c.recorded_uncertainty, interval_text(c.recorded_speedup));
    if (c.fresh_us) {
      fmt::print(
          "     here     {:.4g} us +-{:.2f}%, speedup {}; time ratio {:.3f} [{:.3f}, {:.3f}]\n",
          *c.fresh_us, 100.0 * c.fresh_uncertainty, interval_text(c.fresh_speedup),
          c.time_ratio->ratio, c.time_ratio->low, c.time_ratio->high);
    }
    if (!c.note.empty()) fmt::print("     {}\n", c.note);
  }
  if (r.ok()) {
    fmt::print("REMEASURED: every drawn claim holds\n");
  } else {
    fmt::print("REMEASURE FAILED: a drawn claim does not hold or could not be run as recorded\n");
  }
}

// A claim that the fresh run contradicts fails the bundle; one the checkout could not run as
// recorded is the user's input to fix.
int remeasure_exit(const bundle_remeasure& r) {
  const auto any = [&](claim_status s) {
    return std::any_of(r.claims.begin(), r.claims.end(),
                       [s](const remeasured_claim& c) { return c.status == s; });
  };
  if (any(claim_status::does_not_hold)) return exit_not_verified;
  if (any(claim_status::not_remeasured)) return static_cast<int>(exit_bad_input);
  return static_cast<int>(exit_ok);
}

}  // namespace

command_fn add_export_command(CLI::App& app, const global_options& global) {
  struct flags {
    std::string run;
    std::filesystem::path out;
    std::optional<std::filesystem::path> sign;
    bool allow_incomplete = false;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write a run's evidence bundle: report.md, results.json, run.json, the raw "
      "objects it cites, and SHA256SUMS (signed with --sign).");
  cmd->footer(
      "The bundle is a new folder; nothing is ever written over. Anyone can check it with "
      "`sha256sum -c SHA256SUMS` in the folder, or `blaster verify DIR [--pubkey KEY.pub]`.\n\n"
      "Examples:\n  blaster export latest --out evidence/run-12\n  blaster keygen --out "
      "me && blaster export 12 --out run-12 --sign me.key\n\n"
      "Exit status: 0 written; 1 the machine failed (I/O, a full disk, or an object the store "
      "lacks or that no longer matches its digest: the store is damaged); 2 bad input: no such "
      "run, --out exists and is not empty, --sign is not an Ed25519 private key, no store at "
      "--home, the run is running or was interrupted (without --allow-incomplete).");
  cmd->add_option("run", f->run, "a run id (see blaster runs) or 'latest'")->required();
  cmd->add_option("--out", f->out, "the bundle folder to create")->required();
  cmd->add_option("--sign", f->sign, "sign SHA256SUMS with this private key (PREFIX.key)");
  cmd->add_flag("--allow-incomplete", f->allow_incomplete,
                "export a run that is still running or was interrupted (its run.json says so)");
  return [f, &global]() {
    require_format(global, {"table", "json"}, "export");
    // The key first: a bad key should fail before any work.
    std::optional<ed25519_key> key;
    if (f->sign) key = read_private_key(*f->sign);
    const std::unique_ptr<store> records = require_store(global);
    const std::int64_t run_id = run_catalog(*records).resolve(f->run);
    const bundle_export written =
        export_bundle(*records, run_id, f->out, key ? &*key : nullptr, f->allow_incomplete);
    if (global.json) {
      nlohmann::json j = {{"dir", written.dir.string()},
                          {"run_id", written.run_id},
                          {"files", written.files},
                          {"objects", written.objects},
                          {"total_bytes", written.total_bytes},
                          {"signed", !written.signer_sha256.empty()}};
      if (!written.signer_sha256.empty()) j["signer_sha256"] = written.signer_sha256;
      std::cout << j.dump(2) << '\n';
    } else {
      fmt::print("wrote {}: run {}, {} files ({} objects), {} bytes{}\n", written.dir.string(),
                 written.run_id, written.files.size() + (written.signer_sha256.empty() ? 1 : 2),
                 written.objects, written.total_bytes,
                 written.signer_sha256.empty() ? "" : ", signed by key " + written.signer_sha256);
      fmt::print("check it with: blaster verify {}{}\n", written.dir.string(),
                 written.signer_sha256.empty() ? "" : " --pubkey KEY.pub");
    }
    return static_cast<int>(exit_ok);
  };
}

command_fn add_verify_command(CLI::App& app, const global_options& global) {
  struct flags {
    std::filesystem::path dir;
    std::optional<std::filesystem::path> pubkey;
    bool allow_unchecked = false;
    std::uint64_t max_file_bytes = default_max_bundle_file_bytes;
    std::size_t remeasure = 0;
    std::optional<std::uint64_t> remeasure_seed;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Check an evidence bundle: every file SHA256SUMS lists is there and unchanged, "
      "nothing else is, and (with --pubkey) SHA256SUMS.sig is the key's signature.");
  cmd->footer(
      "Every problem is reported, each by the file's name: missing, changed (with both "
      "digests), extra, symlink, not_a_file, unreadable, manifest (SHA256SUMS missing, or a "
      "malformed line, an absolute path or a '..' component in it), signature, claim (a "
      "results.json that is not the report its run.json cites, or a digest there that is not a "
      "SHA-256; in a portfolio's bundle, a number of its report that is not the one in the run "
      "bundle it cites, an entry of progress.json that is not its row's run and report, or a "
      "tuned table's entry under kernels/ that is not the fastest "
      "configuration the run it names confirmed; in a trajectory export, a row of "
      "trajectories.jsonl that its session's records do not render, or a step that its reply and "
      "its judging run do not give, named by session, step and field; every run bundle inside is "
      "verified too). Each "
      "run.json is held to the files: an object it cites that the bundle lacks is missing even "
      "where SHA256SUMS does not list it, and one that does not hash to its name is changed; a "
      "portfolio keeps its runs' objects in one objects/ folder. A bundle with "
      "SHA256SUMS.sig verifies only with --pubkey (SHA256SUMS.signer names the key), or with "
      "--allow-unchecked-signature, and then the last line says UNCHECKED, not OK.\n\n"
      "With --remeasure N, on a GPU of the bundle's model, N of the bundle's timed candidates "
      "(bench rows, portfolio cases, a session's steps), drawn at random, are judged again from "
      "the bundle's own sources with the checkout's tasks (--root), in the same case, mode and "
      "number of sessions, in a scratch store that is removed afterwards. " +
      std::string(remeasure_rule) +
      " The draw's seed is printed; --remeasure-seed repeats a draw.\n\n"
      "Examples:\n  blaster verify evidence/run-12\n  blaster verify run-12 --pubkey me.pub "
      "--json\n  blaster verify artifacts/core10-h200-v1 --remeasure 3\n\n"
      "Exit status: 0 the bundle verifies: every listed file matches, nothing else is there, and "
      "the signature is valid when --pubkey is given; 1 the machine failed; 2 bad input: DIR is "
      "not a folder, or --pubkey is not an Ed25519 public key; 4 the bundle does not verify "
      "(each problem is printed), or a remeasured claim does not hold; with --remeasure, 2 also "
      "where a drawn claim could not be run as recorded (another task or baseline in the "
      "checkout), and 3 where there is no GPU.");
  cmd->add_option("dir", f->dir, "the bundle folder")->required();
  cmd->add_option("--pubkey", f->pubkey,
                  "the signer's public key (PREFIX.pub); the bundle must then be signed by it");
  cmd->add_flag("--allow-unchecked-signature", f->allow_unchecked,
                "accept a signed bundle without checking its signature (the files are still "
                "checked; the result says UNCHECKED)");
  cmd->add_option("--max-file-bytes", f->max_file_bytes,
                  "a listed file larger than this is a problem, never hashed (default 4 GiB)")
      ->check(whole_number_at_least(1));
  cmd->add_option("--remeasure", f->remeasure,
                  "judge N of the bundle's timed candidates again on this GPU and hold each to "
                  "its recorded interval")
      ->check(whole_number_at_least(1));
  cmd->add_option("--remeasure-seed", f->remeasure_seed,
                  "the seed of the draw (default: a fresh one, printed)");
  return [f, &global]() {
    require_format(global, {"table", "json"}, "verify");
    if (f->remeasure_seed && f->remeasure == 0) {
      BLASTER_INPUT_ERROR("--remeasure-seed seeds the draw of --remeasure N; give that too");
    }
    std::optional<ed25519_key> key;
    if (f->pubkey) key = read_public_key(*f->pubkey);
    bundle_verification v = verify_evidence_bundle(f->dir, key ? &*key : nullptr,
                                                   f->allow_unchecked, f->max_file_bytes);
    check_trajectory_claims(v);
    // The numbers are measured again only where the files are the signed ones: otherwise there
    // is no claim to hold them to.
    std::optional<bundle_remeasure> remeasured;
    if (f->remeasure > 0 && v.ok()) {
      remeasured = remeasure_bundle({.bundle = f->dir,
                                     .root = resolve_root(global),
                                     .claims = f->remeasure,
                                     .seed = f->remeasure_seed});
    }
    if (global.json) {
      nlohmann::json problems = nlohmann::json::array();
      for (const auto& p : v.problems) {
        nlohmann::json item = {
            {"problem", name_of(p.kind)}, {"path", p.path}, {"detail", p.detail}};
        if (!p.expected_sha256.empty()) item["expected_sha256"] = p.expected_sha256;
        if (!p.actual_sha256.empty()) item["actual_sha256"] = p.actual_sha256;
        problems.push_back(std::move(item));
      }
      nlohmann::json j = {{"dir", v.dir.string()},          {"ok", v.ok()},
                          {"files_listed", v.files_listed}, {"files_matched", v.files_matched},
                          {"problems", problems},           {"signature", name_of(v.signature)}};
      if (!v.signer_sha256.empty()) j["signer_sha256"] = v.signer_sha256;
      if (remeasured) j["remeasure"] = remeasure_json(*remeasured);
      if (!v.named_signer_sha256.empty()) j["named_signer_sha256"] = v.named_signer_sha256;
      if (!v.ok()) {
        j["error"] =
            error_json("not_verified",
                       fmt::format("{}: {} problem{}; do not trust this bundle", v.dir.string(),
                                   v.problems.size(), v.problems.size() == 1 ? "" : "s"))["error"];
      }
      std::cout << j.dump(2) << '\n';
    } else {
      fmt::print("bundle {}: {} files listed in SHA256SUMS, {} match\n", v.dir.string(),
                 v.files_listed, v.files_matched);
      for (const auto& p : v.problems) {
        fmt::print("  {:<10}  {}: {}\n", name_of(p.kind), p.path, p.detail);
        if (!p.expected_sha256.empty() && !p.actual_sha256.empty()) {
          fmt::print("              listed {}\n              actual {}\n", p.expected_sha256,
                     p.actual_sha256);
        }
      }
      switch (v.signature) {
        case signature_status::valid:
          fmt::print("signature: valid, Ed25519 key {}\n", v.signer_sha256);
          break;
        case signature_status::invalid:
          fmt::print("signature: INVALID\n");
          break;
        case signature_status::unchecked:
          fmt::print("signature: present{} and NOT CHECKED (--allow-unchecked-signature)\n",
                     v.named_signer_sha256.empty() ? "" : ", by key " + v.named_signer_sha256);
          break;
        case signature_status::missing:
          fmt::print("signature: MISSING, and --pubkey asked for one\n");
          break;
        case signature_status::absent:
          fmt::print("signature: none\n");
          break;
      }
      if (v.ok() && v.signature == signature_status::unchecked) {
        fmt::print(
            "UNCHECKED: every file matches SHA256SUMS and nothing else is there, but the "
            "signature was not checked; pass --pubkey KEY.pub to check it\n");
      } else if (v.ok()) {
        fmt::print("OK: every file matches SHA256SUMS and nothing else is there\n");
      } else {
        fmt::print("FAILED: {} problem{}; do not trust this bundle\n", v.problems.size(),
                   v.problems.size() == 1 ? "" : "s");
      }
      if (f->remeasure > 0 && !v.ok()) fmt::print("not remeasured: the bundle does not verify\n");
      if (remeasured) print_remeasure(*remeasured);
    }
    if (!v.ok()) return exit_not_verified;
    return remeasured ? remeasure_exit(*remeasured) : static_cast<int>(exit_ok);
  };
}

command_fn add_keygen_command(CLI::App& app, const global_options& global) {
  auto prefix = std::make_shared<std::filesystem::path>();
  CLI::App* cmd = app.add_subcommand(
      "keygen",
      "Make an Ed25519 key pair for signing bundles: PREFIX.key (private, mode 0600) "
      "and PREFIX.pub (public, to share).");
  cmd->footer(
      "Existing files are never replaced. Sign with `blaster export RUN --out DIR --sign "
      "PREFIX.key`; reviewers check with `blaster verify DIR --pubkey PREFIX.pub` or with "
      "openssl (see the bundle's report.md).\n\n"
      "Exit status: 0 written; 1 the machine failed (I/O, a full disk); 2 bad input: PREFIX.key "
      "or PREFIX.pub exists, or the folder does not.");
  cmd->add_option("--out", *prefix, "PREFIX of the two files")->required();
  return [prefix, &global]() {
    require_format(global, {"table", "json"}, "keygen");
    const ed25519_key key = ed25519_key::generate();
    write_key_pair(key, *prefix);
    const std::string private_path = prefix->string() + ".key";
    const std::string public_path = prefix->string() + ".pub";
    if (global.json) {
      std::cout << nlohmann::json{{"private_key", private_path},
                                  {"public_key", public_path},
                                  {"public_sha256", key.public_sha256()}}
                       .dump(2)
                << '\n';
    } else {
      fmt::print("wrote {} (private, mode 0600: keep it secret) and {} (public: share it)\n",
                 private_path, public_path);
      // The fingerprint bundles name their signer by (SHA256SUMS.signer), and how a reviewer
      // computes it without blaster: it is the digest of the key's 32 bytes, not of the file.
      fmt::print(
          "fingerprint ed25519 {} (openssl pkey -pubin -in {} -outform DER | tail -c 32 | "
          "sha256sum)\n",
          key.public_sha256(), public_path);
    }
    return static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
