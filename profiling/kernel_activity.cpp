#include "profiling/kernel_activity.hpp"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "core/error.hpp"

namespace blaster {
namespace {

constexpr std::size_t buffer_bytes = 8 << 20;

std::mutex records_mutex;
std::vector<kernel_record> records;  // filled by CUPTI's completion callback

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes));
  *size = *buffer == nullptr ? 0 : buffer_bytes;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  CUpti_Activity* record = nullptr;
  const std::lock_guard lock(records_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    records.push_back({kernel->name == nullptr ? "?" : kernel->name, kernel->start, kernel->end});
  }
  std::free(buffer);
}

void check_cupti(CUptiResult status, const char* what) {
  if (status == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(status, &text);
  BLASTER_THROW("{}: {}", what, text == nullptr ? "unknown CUPTI error" : text);
}

}  // namespace

kernel_activity::kernel_activity(bool paused) : paused_(true) {
  {
    const std::lock_guard lock(records_mutex);
    records.clear();
  }
  // For every recorder: the last one's end detached CUPTI from the process.
  check_cupti(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
              "cuptiActivityRegisterCallbacks");
  if (!paused) resume();
}

kernel_activity::~kernel_activity() {
  pause();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  // Enabled once, CUPTI slows every later launch of the process even while disabled (on the
  // H200, 0.2 us a graph-replayed launch: a tenth of a 2 us kernel); detached, it does not. A
  // worker kept between evaluations times the next one as a fresh process would.
  cuptiFinalize();
}

void kernel_activity::pause() {
  if (paused_) return;
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  paused_ = true;
}

void kernel_activity::resume() {
  if (!paused_) return;
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
  paused_ = false;
}

std::vector<kernel_record> kernel_activity::collect() {
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  const std::lock_guard lock(records_mutex);
  return records;
}

kernel_recorder::kernel_recorder(std::vector<std::string> ignored) : ignored_(std::move(ignored)) {}

bool kernel_recorder::start() {
  if (!unavailable_.empty()) return false;
  try {
    if (!activity_) activity_.emplace(/*paused=*/true);
    static_cast<void>(activity_->take());
    check_cupti(cuptiGetTimestamp(&since_ns_), "cuptiGetTimestamp");
    activity_->resume();
  } catch (const error& e) {
    activity_.reset();
    unavailable_ = e.what();
    return false;
  }
  seen_.clear();
  seen_us_.clear();
  executions_ = 0;
  return true;
}

void kernel_recorder::stop() {
  if (activity_) activity_->pause();
}

double kernel_recorder::take_us() {
  double ns = 0.0;
  for (const kernel_record& r : take_records()) ns += static_cast<double>(r.end_ns - r.start_ns);
  return ns / 1000.0;
}

std::vector<kernel_record> kernel_recorder::take_records() {
  std::vector<kernel_record> kept;
  if (!activity_) return kept;
  for (kernel_record& r : activity_->take()) {
    if (std::find(ignored_.begin(), ignored_.end(), r.name) != ignored_.end()) continue;
    if (r.start_ns < since_ns_) continue;
    ++seen_[r.name];
    ++executions_;
    seen_us_[r.name] += static_cast<double>(r.end_ns - r.start_ns) / 1000.0;
    kept.push_back(std::move(r));
  }
  std::sort(kept.begin(), kept.end(),
            [](const kernel_record& a, const kernel_record& b) { return a.start_ns < b.start_ns; });
  return kept;
}

std::vector<kernel_record> kernel_activity::take() {
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  const std::lock_guard lock(records_mutex);
  return std::exchange(records, {});
}

}  // namespace blaster
