// Interim pool: aligned host allocations with counters. To be replaced by
// the jemalloc arena on CUDA managed memory (issue 3).
#include <marg/numeric/error.hpp>
#include <marg/numeric/pool.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

namespace marg {
namespace {
std::atomic<std::size_t> in_use{0};
std::atomic<std::size_t> limit{std::size_t{1} << 40};
}  // namespace

void* allocate(std::size_t bytes, stream_view) {
  if (bytes == 0) return nullptr;
  const std::size_t rounded = (bytes + pool_alignment - 1) / pool_alignment * pool_alignment;
  if (in_use.load() + rounded > limit.load())
    throw out_of_memory("marg::allocate: requested " + std::to_string(bytes) + " bytes, " +
                        std::to_string(limit.load() - in_use.load()) + " available");
  void* p = std::aligned_alloc(pool_alignment, rounded);
  if (p == nullptr)
    throw out_of_memory("marg::allocate: requested " + std::to_string(bytes) +
                        " bytes, the system has none");
  in_use += rounded;
  return p;
}

void deallocate(void* ptr, std::size_t bytes, stream_view) noexcept {
  if (ptr == nullptr) return;
  in_use -= (bytes + pool_alignment - 1) / pool_alignment * pool_alignment;
  std::free(ptr);
}

pool_statistics pool_stats() {
  return {in_use.load(), in_use.load(), limit.load()};
}

void set_pool_limit(std::size_t bytes) {
  MARG_EXPECTS(bytes >= 1, detail::bad_argument("marg::set_pool_limit", "bytes",
                                                static_cast<std::int64_t>(bytes), ">= 1"));
  limit.store(bytes);
}

std::size_t pool_limit() {
  return limit.load();
}

namespace detail {
void wait_for_stream(stream_view) {}
}  // namespace detail

}  // namespace marg
