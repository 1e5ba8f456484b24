// The memory pool and marg::array. These run on the host-memory pool on a
// machine without GPU and on the managed-memory pool on a GPU.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <marg/numeric/array.hpp>
#include <marg/numeric/backend.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/error.hpp>
#include <marg/numeric/pool.hpp>

#include "numeric_fixture.hpp"

namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// a byte pattern that depends on the block and the offset
unsigned char pattern(std::uint64_t seed, std::size_t i) {
  return static_cast<unsigned char>((seed * 0x9E3779B97F4A7C15ull + i * 131) >> 29);
}

// writes the pattern at both ends and every `step` bytes; returns false on a mismatch
void fill_sparse(unsigned char* p, std::size_t bytes, std::uint64_t seed, std::size_t step) {
  for (std::size_t i = 0; i < bytes; i += step) p[i] = pattern(seed, i);
  p[bytes - 1] = pattern(seed, bytes - 1);
}

bool check_sparse(const unsigned char* p, std::size_t bytes, std::uint64_t seed, std::size_t step) {
  for (std::size_t i = 0; i < bytes; i += step)
    if (p[i] != pattern(seed, i)) return false;
  return p[bytes - 1] == pattern(seed, bytes - 1);
}

bool aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % marg::pool_alignment == 0;
}

// restores the pool limit at scope exit
struct limit_guard {
  std::size_t saved = marg::pool_limit();
  ~limit_guard() { marg::set_pool_limit(saved); }
};

}  // namespace

TEST_CASE("pool: 0-byte requests and nullptr", "[pool]") {
  CHECK(marg::allocate(0) == nullptr);
  marg::deallocate(nullptr, 0);
  marg::deallocate(nullptr, 100);
  marg::array<double> a(0);
  CHECK(a.empty());
  CHECK(a.data() == nullptr);
  CHECK(a.to_vector().empty());
}

TEST_CASE("pool: a freed block is reused for the same size", "[pool]") {
  for (std::size_t bytes : {std::size_t{1}, std::size_t{300}, 4 * KiB, 100 * KiB, 3 * MiB}) {
    CAPTURE(bytes);
    void* a = marg::allocate(bytes);
    marg::deallocate(a, bytes);
    const std::size_t reserved = marg::pool_stats().bytes_reserved;
    void* b = marg::allocate(bytes);
    // the same memory again: jemalloc may shift a large block inside its first
    // page (cache-oblivious placement), so compare within a page
    const auto d = reinterpret_cast<std::intptr_t>(b) - reinterpret_cast<std::intptr_t>(a);
    CHECK(d > -4096);
    CHECK(d < 4096);
    CHECK(marg::pool_stats().bytes_reserved == reserved);
    marg::deallocate(b, bytes);
  }
}

TEST_CASE("pool: alignment of 256 bytes for every size", "[pool]") {
  std::vector<std::pair<void*, std::size_t>> live;
  for (std::size_t bytes = 1; bytes <= 70000; bytes = bytes * 3 + 1) {
    for (int k = 0; k < 5; ++k) {
      void* p = marg::allocate(bytes);
      CAPTURE(bytes, k);
      CHECK(aligned(p));
      live.emplace_back(p, bytes);
    }
  }
  for (auto [p, b] : live) marg::deallocate(p, b);
}

TEST_CASE("pool: sizes from 1 byte to 1 GiB hold their contents", "[pool]") {
  std::vector<std::size_t> sizes;
  for (std::size_t b = 1; b <= GiB; b *= 4) {
    sizes.push_back(b);
    if (b > 1) sizes.push_back(b - 1);
    sizes.push_back(b + 13);
  }
  sizes.push_back(GiB);
  std::vector<std::pair<unsigned char*, std::size_t>> live;
  std::uint64_t seed = 1;
  for (std::size_t b : sizes) {
    auto* p = static_cast<unsigned char*>(marg::allocate(b));
    REQUIRE(p != nullptr);
    CHECK(aligned(p));
    fill_sparse(p, b, seed++, b < MiB ? 1 : 4093);
    live.emplace_back(p, b);
    // keep the small ones alive together, free the big ones at once
    if (b >= 64 * MiB) {
      CHECK(check_sparse(p, b, seed - 1, 4093));
      marg::deallocate(p, b);
      live.pop_back();
    }
  }
  seed = 1;
  for (std::size_t b : sizes) {
    if (b >= 64 * MiB) {
      ++seed;
      continue;
    }
    auto it = std::find_if(live.begin(), live.end(), [&](auto& e) { return e.second == b; });
    REQUIRE(it != live.end());
    CAPTURE(b);
    CHECK(check_sparse(it->first, b, seed++, b < MiB ? 1 : 4093));
    marg::deallocate(it->first, b);
    live.erase(it);
  }
}

TEST_CASE("pool: 8 threads allocate, fill, check and free concurrently", "[pool][threads]") {
  constexpr int threads = 8;
  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::atomic<long> errors{0}, blocks{0};
  // blocks handed between threads, so that many are freed by another thread
  struct block {
    unsigned char* p;
    std::size_t bytes;
    std::uint64_t seed;
  };
  std::mutex exchange_mutex;
  std::vector<block> exchange;
  auto worker = [&](int id) {
    std::mt19937_64 rng(1234 + id);
    std::vector<block> mine;
    std::uint64_t serial = 0;
    auto release = [&](const block& b) {
      if (!check_sparse(b.p, b.bytes, b.seed, 1)) ++errors;
      marg::deallocate(b.p, b.bytes);
    };
    while (std::chrono::steady_clock::now() < stop) {
      for (int k = 0; k < 64; ++k) {
        const std::size_t bytes = rng() % 16 == 0 ? 1 + rng() % (256 * KiB) : 1 + rng() % 2048;
        block b{static_cast<unsigned char*>(marg::allocate(bytes)), bytes,
                (std::uint64_t(id) << 40) | serial++};
        if (!aligned(b.p)) ++errors;
        fill_sparse(b.p, b.bytes, b.seed, 1);
        mine.push_back(b);
        ++blocks;
      }
      std::shuffle(mine.begin(), mine.end(), rng);
      {
        const std::lock_guard lock(exchange_mutex);
        for (int k = 0; k < 16 && !mine.empty(); ++k) {
          exchange.push_back(mine.back());
          mine.pop_back();
        }
        for (int k = 0; k < 16 && !exchange.empty(); ++k) {
          mine.push_back(exchange.front());
          exchange.erase(exchange.begin());
        }
      }
      while (mine.size() > 32) {
        release(mine.back());
        mine.pop_back();
      }
    }
    for (const block& b : mine) release(b);
  };
  const auto before = marg::pool_stats();
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker, i);
  for (auto& t : pool) t.join();
  for (const block& b : exchange) {
    CHECK(check_sparse(b.p, b.bytes, b.seed, 1));
    marg::deallocate(b.p, b.bytes);
  }
  INFO("blocks allocated: " << blocks.load());
  CHECK(blocks.load() > 1000);
  CHECK(errors.load() == 0);
  CHECK(marg::pool_stats().bytes_in_use == before.bytes_in_use);
}

TEST_CASE("pool: past the limit out_of_memory, and the pool still works", "[pool]") {
  limit_guard guard;
  marg::pool_trim();
  const auto s = marg::pool_stats();
  marg::set_pool_limit(s.bytes_reserved + 64 * MiB);
  CHECK(marg::pool_limit() == s.bytes_reserved + 64 * MiB);

  // one request larger than what is left
  try {
    (void)marg::allocate(256 * MiB);
    FAIL("no out_of_memory");
  } catch (const marg::out_of_memory& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("requested 268435456 bytes") != std::string::npos);
    CHECK(what.find("available") != std::string::npos);
  }
  // many requests until the cap; then free and allocate again
  for (int round = 0; round < 2; ++round) {
    std::vector<void*> live;
    bool hit = false;
    try {
      for (int k = 0; k < 1000; ++k) live.push_back(marg::allocate(MiB));
    } catch (const std::bad_alloc&) {
      hit = true;
    }
    CAPTURE(round, live.size());
    CHECK(hit);
    CHECK(live.size() >= 32);
    CHECK(live.size() <= 64);
    for (void* p : live) marg::deallocate(p, MiB);
  }
  void* p = marg::allocate(32 * MiB);
  std::memset(p, 1, 32 * MiB);
  marg::deallocate(p, 32 * MiB);
  CHECK_THROWS_AS(marg::set_pool_limit(0), marg::invalid_argument);
}

TEST_CASE("pool: statistics come back to their start after everything is freed", "[pool]") {
  auto workload = [](std::vector<std::pair<void*, std::size_t>>& live) {
    std::size_t sum = 0;
    for (std::size_t b : {std::size_t{1}, std::size_t{100}, 5 * KiB, 300 * KiB, 7 * MiB, 40 * MiB})
      for (int k = 0; k < 3; ++k) {
        live.emplace_back(marg::allocate(b), b);
        std::memset(live.back().first, 7, b);
        sum += b;
      }
    return sum;
  };
  std::vector<std::pair<void*, std::size_t>> live;
  workload(live);  // warm up: the arena's own metadata grows once
  for (auto [p, b] : live) marg::deallocate(p, b);
  live.clear();
  marg::pool_trim();

  const auto start = marg::pool_stats();
  const std::size_t sum = workload(live);
  const auto busy = marg::pool_stats();
  CHECK(busy.bytes_in_use >= start.bytes_in_use + sum);
  CHECK(busy.bytes_reserved >= start.bytes_reserved + sum);
  for (auto [p, b] : live) marg::deallocate(p, b);
  CHECK(marg::pool_stats().bytes_in_use == start.bytes_in_use);
  marg::pool_trim();
  const auto end = marg::pool_stats();
  CHECK(end.bytes_in_use == start.bytes_in_use);
  CHECK(end.bytes_reserved == start.bytes_reserved);
}

TEST_CASE("pool: jemalloc stays private (the program's malloc and new are its own)", "[pool]") {
  void* p = marg::allocate(100);  // the pool exists
  // libmarg is linked into this program: its image must not be where the
  // program's malloc and operator new come from (libc and libstdc++, or a
  // sanitizer's runtime under ASan)
  Dl_info self{}, info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&marg::allocate), &self) != 0);
  REQUIRE(dladdr(reinterpret_cast<void*>(&std::malloc), &info) != 0);
  INFO("libmarg is in " << self.dli_fname << ", malloc comes from " << info.dli_fname);
  CHECK(std::string(info.dli_fname) != self.dli_fname);
  void* (*new_fn)(std::size_t) = &::operator new;
  REQUIRE(dladdr(reinterpret_cast<void*>(new_fn), &info) != 0);
  INFO("operator new comes from " << info.dli_fname);
  CHECK(std::string(info.dli_fname) != self.dli_fname);
  CHECK(dlsym(RTLD_DEFAULT, "mallocx") == nullptr);
  CHECK(dlsym(RTLD_DEFAULT, "marg_je_mallocx") == nullptr);
  // the program's allocator and the pool work side by side
  void* q = std::malloc(100);
  std::free(q);
  marg::deallocate(p, 100);
}

TEMPLATE_TEST_CASE("array: move-only, clone, vector in and out, iterators", "[pool][array]", float,
                   double) {
  using T = TestType;
  static_assert(!std::is_copy_constructible_v<marg::array<T>>);
  static_assert(!std::is_copy_assignable_v<marg::array<T>>);
  static_assert(std::is_nothrow_move_constructible_v<marg::array<T>>);
  static_assert(std::is_nothrow_move_assignable_v<marg::array<T>>);

  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{97}, std::size_t{1000003}}) {
    CAPTURE(n);
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(i % 1000) / T(7);
    marg::array<T> a(v);
    REQUIRE(a.size() == n);
    CHECK_FALSE(a.empty());
    CHECK(aligned(a.data()));
    CHECK(a.to_vector() == v);
    CHECK(std::equal(a.begin(), a.end(), v.begin(), v.end()));
    long double sum = 0, ref = 0;
    for (const T& x : a) sum += x;
    for (std::size_t i = 0; i < n; ++i) ref += v[i];
    CHECK(sum == ref);

    marg::array<T> c = a.clone();
    CHECK(c.data() != a.data());
    CHECK(c.to_vector() == v);
    c[0] = T(-1);
    CHECK(a[0] == v[0]);

    const T* data = a.data();
    marg::array<T> m(std::move(a));
    CHECK(m.data() == data);
    CHECK(a.empty());  // NOLINT: moved-from is empty by contract
    CHECK(a.data() == nullptr);
    a = std::move(m);
    CHECK(a.data() == data);
    CHECK(m.empty());
    a = marg::array<T>(3, T(2));
    CHECK(a.to_vector() == std::vector<T>(3, T(2)));
  }
  marg::array<T> il{T(1), T(2), T(3)};
  CHECK(il.to_vector() == std::vector<T>{T(1), T(2), T(3)});
  const marg::array<T>& cref = il;
  CHECK(cref[2] == T(3));
  CHECK(std::accumulate(cref.begin(), cref.end(), T(0)) == T(6));
}

TEST_CASE("array: every allocation is counted and returned", "[pool][array]") {
  const std::size_t before = marg::pool_stats().bytes_in_use;
  {
    marg::array<double> a(1000), b(5000, 1.0);
    CHECK(marg::pool_stats().bytes_in_use >= before + 6000 * sizeof(double));
  }
  CHECK(marg::pool_stats().bytes_in_use == before);
  CHECK_THROWS_AS(marg::array<double>(std::size_t(-1) / 4), marg::out_of_memory);
  CHECK(marg::pool_stats().bytes_in_use == before);
}

TEMPLATE_TEST_CASE("pool (cuda): host, pool and mixed operands, threads with their own streams",
                   "[pool][cuda]", float, double) {
  using T = TestType;
  MARG_SKIP_IF_NO_GPU(true);
  const marg::backend saved = marg::requested_backend();
  marg::set_backend(marg::backend::cuda);
  std::atomic<long> errors{0};
  auto worker = [&](int id) {
    std::mt19937 rng(77 + id);
    for (int it = 0; it < 40; ++it) {
      const int m = 1 + static_cast<int>(rng() % 3000), n = 1 + static_cast<int>(rng() % 3000);
      std::vector<T> p(m), q(n);
      for (auto& x : p) x = T(rng() % 1000) / T(1000);
      for (auto& x : q) x = T(rng() % 1000) / T(1000);
      std::vector<long double> ref(m + n - 1, 0.0L);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) ref[i + j] += (long double)p[i] * q[j];
      auto close = [&](auto get) {
        for (int i = 0; i < m + n - 1; ++i) {
          const long double r = get(i), e = ref[i];
          if (std::abs(r - e) > 1e-4L * (1 + std::abs(e))) return false;
        }
        return true;
      };
      // pool operands on the thread's stream, and host operands (staged)
      marg::array<T> ap(p), aq(q), ar(m + n - 1);
      marg::convolve(m, n, ap.data(), 1, aq.data(), 1, ar.data(), 1, ar.stream());
      if (!close([&](int i) { return (long double)ar[i]; })) ++errors;
      std::vector<T> hr(m + n - 1);
      marg::convolve(m, n, p.data(), 1, aq.data(), 1, hr.data(), 1);
      if (!close([&](int i) { return (long double)hr[i]; })) ++errors;
    }
  };
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i) ts.emplace_back(worker, i);
  for (auto& t : ts) t.join();
  marg::set_backend(saved);
  CHECK(errors.load() == 0);
}

TEST_CASE("every pool call keeps its documented behaviour at every limit", "[pool]") {
  const limit_guard guard;
  const std::size_t minimum = marg::pool_minimum_limit();
  CHECK(minimum > 0);
  CHECK(minimum <= marg::pool_stats().bytes_reserved);
  const std::size_t reserved = marg::pool_stats().bytes_reserved;
  for (const std::size_t limit :
       {std::size_t{1}, std::size_t{4096}, minimum - 1, minimum, reserved, reserved + 64 * MiB}) {
    INFO("limit " << limit << ", minimum " << minimum << ", reserved " << reserved);
    marg::set_pool_limit(limit);
    CHECK(marg::pool_limit() == limit);
    CHECK(marg::pool_stats().limit == limit);
    // a block needing new memory past the cap throws out_of_memory, nothing else
    for (const std::size_t bytes : {std::size_t{64}, 4 * MiB}) {
      void* p = nullptr;
      try {
        p = marg::allocate(bytes);
      } catch (const marg::out_of_memory&) {
        CHECK(limit < reserved + 64 * MiB);
      }
      if (p != nullptr) {
        CHECK(aligned(p));
        std::memset(p, 0x5a, bytes);
        marg::deallocate(p, bytes);
      }
    }
    marg::pool_trim();
    CHECK(marg::pool_stats().limit == limit);
  }
  // a cap of 0 is refused and changes nothing
  CHECK_THROWS_AS(marg::set_pool_limit(0), marg::invalid_argument);
  CHECK(marg::pool_limit() == reserved + 64 * MiB);
  marg::set_pool_limit(guard.saved);
  void* p = marg::allocate(MiB);
  REQUIRE(p != nullptr);
  marg::deallocate(p, MiB);
}
