#include "core/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace blaster {

void parallel_for(std::int64_t count,
                  const std::function<void(std::int64_t begin, std::int64_t end)>& body) {
  if (count <= 0) return;
  const std::int64_t workers = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::thread::hardware_concurrency()), 1, count);
  if (workers == 1) {
    body(0, count);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::jthread> threads;
  threads.reserve(static_cast<std::size_t>(workers));
  for (std::int64_t w = 0; w < workers; ++w) {
    const std::int64_t begin = count * w / workers;
    const std::int64_t end = count * (w + 1) / workers;
    threads.emplace_back([&, begin, end] {
      try {
        body(begin, end);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  threads.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

void on_every_lane(std::size_t lanes, const std::function<void(std::size_t lane)>& work) {
  if (lanes <= 1) {
    work(0);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::jthread> threads;
  threads.reserve(lanes);
  for (std::size_t lane = 0; lane < lanes; ++lane) {
    threads.emplace_back([&, lane] {
      try {
        work(lane);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  threads.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

void spread_over_lanes(std::size_t count, std::size_t lanes,
                       const std::function<void(std::size_t item, std::size_t lane)>& work) {
  std::atomic<std::size_t> next{0};
  on_every_lane(lanes, [&](std::size_t lane) {
    for (std::size_t item = next++; item < count; item = next++) {
      try {
        work(item, lane);
      } catch (...) {
        next = count;
        throw;
      }
    }
  });
}

}  // namespace blaster
