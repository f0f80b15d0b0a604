#include "benchmarking/worker/detail/worker_context.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "tasks/drawn_cases.hpp"

namespace blaster::worker {

const mapped_file& host_memory::map(role r, const std::filesystem::path& path,
                                    mapped_file::access mode) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    BLASTER_THROW("cannot stat {}: {}", path.string(), std::strerror(errno));
  }
  std::optional<kept_file>& kept = files_.at(static_cast<std::size_t>(r));
  if (kept && kept->device == info.st_dev && kept->inode == info.st_ino &&
      kept->bytes == static_cast<std::uint64_t>(info.st_size) && kept->mode == mode) {
    return kept->file;
  }
  kept.reset();  // the old mapping goes first: a file removed since is freed now
  kept = kept_file{.device = info.st_dev,
                   .inode = info.st_ino,
                   .bytes = static_cast<std::uint64_t>(info.st_size),
                   .mode = mode,
                   .file = mapped_file::open(path, mode)};
  return kept->file;
}

std::span<std::byte> host_memory::scratch(std::size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return {scratch_.data(), bytes};
}

std::size_t worker_context::width_of(const std::string& buffer) const {
  const buffer_spec* spec = task.find_buffer(buffer);
  return spec == nullptr ? 1 : size_of(spec->type);
}

void load_variant(worker_context& w) {
  const worker_request& r = w.request;
  w.task = load_task(r.root, r.task);
  // A drawn case is rebuilt from its name, which holds the run's seed.
  for (const auto& check : r.checks) {
    if (is_drawn_case_name(check.case_name)) add_drawn_cases_named(w.task, check.case_name);
  }
  w.cas.emplace(r.home / "cas");
  w.cache.emplace(r.home / "cache", *w.cas);
  w.candidate =
      load_candidate(r.candidate_file, r.arch, &*w.cache, r.compile, common_headers_folder(r.root),
                     &w.task);
  if (sha256_hex(w.candidate.source) != r.source_sha256) {
    BLASTER_INPUT_ERROR("{} changed while it was being evaluated", r.candidate_file.string());
  }
  for (const auto& v : w.candidate.variants) {
    if (v.label == r.variant) w.variant = &v;
  }
  if (w.variant == nullptr || !w.variant->compiled.ok || !w.candidate.plan) {
    BLASTER_INPUT_ERROR("{}: no compiled variant {}", r.candidate_file.string(), r.variant);
  }
  w.module.emplace(module_image(w.variant->compiled));
}

void map_data(worker_context& w) {
  const worker_request& r = w.request;
  w.inputs = &w.host.map(host_memory::role::inputs, r.inputs_file, mapped_file::access::read_only);
  w.outputs = &w.host.map(host_memory::role::outputs, r.outputs_file,
                          r.phase == worker_phase::gate ? mapped_file::access::read_write
                                                        : mapped_file::access::read_only);
}

std::optional<device_compare::difference> compare_bytes(std::span<const std::byte> a,
                                                        std::span<const std::byte> b,
                                                        std::size_t width) {
  if (std::memcmp(a.data(), b.data(), a.size()) == 0) return std::nullopt;
  device_compare::difference d{.first = a.size(), .count = 0};
  for (std::size_t i = 0; i < a.size(); i += width) {
    if (std::memcmp(a.data() + i, b.data() + i, width) != 0) {
      d.first = std::min(d.first, i / width);
      ++d.count;
    }
  }
  return d;
}

}  // namespace blaster::worker
