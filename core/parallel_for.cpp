#include "core/parallel_for.hpp"

#include <algorithm>
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

}  // namespace blaster
