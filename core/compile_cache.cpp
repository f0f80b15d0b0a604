#include "core/compile_cache.hpp"

#include <chrono>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/candidate_frontend.hpp"
#include "core/cas_store.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"

namespace blaster {

compile_cache::compile_cache(std::filesystem::path dir, cas_store& cas)
    : dir_(std::move(dir)), cas_(cas) {
  std::filesystem::create_directories(dir_);
  remove_abandoned_temp_files(dir_);
}

std::filesystem::path compile_cache::entry_path(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".json");
}

std::optional<compile_output> compile_cache::find(const std::string& key) const {
  const auto path = entry_path(key);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  // A damaged entry or a missing object is a miss, never an error: the cache can always be
  // rebuilt from the source.
  const auto entry = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!entry.is_object()) return std::nullopt;
  compile_output out;
  try {
    if (entry.at("key").get<std::string>() != key) return std::nullopt;
    out.key = key;
    out.ok = entry.at("ok").get<bool>();
    out.log = bounded_log(entry.at("log").get<std::string>());
    out.options = entry.at("options").get<std::vector<std::string>>();
    out.lowered_names = entry.at("lowered_names").get<std::map<std::string, std::string>>();
    // Entries of NVRTC's compiles from before other frontends have neither. The object is held
    // here: items() of a temporary would outlive it in the loop.
    const nlohmann::json kernels = entry.value("kernels", nlohmann::json::object());
    for (const auto& [name, k] : kernels.items()) {
      out.kernels[name] = frontend_kernel_from_json(k);
    }
    out.toolchain = entry.value("toolchain", "");
    if (out.ok) {
      auto cubin = cas_.get(entry.at("cubin_sha256").get<std::string>());
      auto ptx = cas_.get(entry.at("ptx_sha256").get<std::string>());
      if (!cubin || !ptx) return std::nullopt;
      out.cubin = std::move(*cubin);
      out.ptx = std::move(*ptx);
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  out.cache_hit = true;
  return out;
}

void compile_cache::put(const compile_output& output) {
  nlohmann::json entry = {
      {"key", output.key},
      {"ok", output.ok},
      {"log", output.log},
      {"options", output.options},
      {"lowered_names", output.lowered_names},
  };
  if (!output.kernels.empty()) {
    nlohmann::json kernels = nlohmann::json::object();
    for (const auto& [name, k] : output.kernels) kernels[name] = to_json(k);
    entry["kernels"] = kernels;
  }
  if (!output.toolchain.empty()) entry["toolchain"] = output.toolchain;
  if (output.ok) {
    entry["cubin_sha256"] = cas_.put(output.cubin);
    entry["ptx_sha256"] = cas_.put(output.ptx);
  }
  const auto path = entry_path(output.key);
  std::filesystem::create_directories(path.parent_path());
  write_file_atomically(path, entry.dump(1));
}

namespace {

// A hit, or the compile `miss` runs, stored when it is worth keeping.
template <class Compile>
compile_output cached(const compile_request& request, compile_cache* cache, Compile miss) {
  if (cache == nullptr) return miss();
  const auto started = std::chrono::steady_clock::now();
  const std::string key = frontend_for(request.kind).key(request);
  if (auto hit = cache->find(key)) {
    // What the entry does not hold comes from the request itself.
    hit->sources_sha256 = sources_sha256(request);
    for (const auto& h : request.headers) hit->header_sha256[h.name] = sha256_hex(h.content);
    hit->compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    return std::move(*hit);
  }
  compile_output out = miss();
  if (out.refusal.empty()) cache->put(out);
  return out;
}

}  // namespace

compile_output compile_cached(const compile_request& request, compile_cache* cache) {
  return cached(request, cache, [&] { return compile(request); });
}

compile_output compile_sandboxed_cached(const compile_request& request, compile_cache* cache,
                                        const compile_limits& limits) {
  return cached(request, cache,
                [&] { return frontend_for(request.kind).compile(request, limits); });
}

}  // namespace blaster
