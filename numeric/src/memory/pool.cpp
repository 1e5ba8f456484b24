// The libmarg pool: one private jemalloc arena per device (see jemalloc.hpp
// and cmake/marg_dependencies.cmake for how jemalloc is kept private) whose
// extents come from CUDA managed memory when a GPU is usable and from mmap
// otherwise (then one pool, index 0). Each pool has its own cap, counters,
// chunks and stream lists; each thread has one jemalloc cache per pool
// (a cache hands a freed block to the next allocation of its size whatever
// the arena, so pools cannot share one).
//
// Extent hooks. Each alloc hook call maps one chunk. jemalloc may split a
// chunk's extents and merge them back (merges are refused across chunks); a
// dalloc of any piece succeeds, and the chunk is unmapped (cudaFree/munmap)
// once all of its bytes have been handed back, so nothing is retained
// forever (retain:false). The cap is enforced in the alloc hook.
//
// Streams (GPU only). A block freed on a libmarg thread stream s goes to s's
// free list and is reused at once by allocations on s. A block freed on a
// stream libmarg does not own goes into a batch with an event recorded right
// after the free. Free lists are closed by recording an event on their
// stream; a closed batch goes back to jemalloc (and so to every stream) only
// once its event has completed: rmm's rule.
#include <marg/numeric/backend.hpp>
#include <marg/numeric/device.hpp>
#include <marg/numeric/error.hpp>
#include <marg/numeric/pool.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../detail/environment.hpp"
#include "device_memory.hpp"
#include "jemalloc.hpp"
#include "pool_extents.hpp"

// options of libmarg's private jemalloc: never keep unmapped address space
// (retain:false makes shrinking reach the dalloc hook), purge dirty pages
// straight to the hook (muzzy_decay_ms:0), and cache blocks of 8 MiB and more
// like the others (jemalloc otherwise purges them at once on free, which on a
// GPU would be a cudaFree + cudaMallocManaged per large allocation)
extern "C" {
const char* je_malloc_conf = "retain:false,muzzy_decay_ms:0,oversize_threshold:0";
}

namespace marg {
namespace {

namespace dev = detail::device;

static_assert(pool_alignment == 256);
constexpr int align_flag = MALLOCX_LG_ALIGN(8);  // pool_alignment
constexpr std::size_t host_page = 4096;

// one mapping obtained from the system
struct chunk {
  void* raw;              // what to unmap / cudaFree
  std::size_t raw_bytes;  // its length (host)
  std::size_t bytes;      // usable length, from the chunk's key
  std::size_t released;   // bytes jemalloc has handed back
  bool managed;
};

// blocks freed on a stream, waiting for an event before general reuse
struct batch {
  void* event;
  std::vector<std::pair<void*, std::size_t>> blocks;  // pointer, size class
};

// a thread stream's free list: reusable at once on that stream
struct stream_list {
  std::unordered_map<std::size_t, std::vector<void*>> blocks;  // by size class
  std::size_t bytes = 0;
};

struct pool_state;

// the hooks jemalloc calls with, and the pool they serve (standard layout:
// the extent_hooks_t* jemalloc passes back is the address of the wrapper)
struct arena_hooks {
  extent_hooks_t hooks;
  pool_state* state;
};

struct pool_state {
  int index = 0;  // the device (0 without a GPU)
  arena_hooks hooks{};
  unsigned arena = 0;
  bool managed = false;
  std::atomic<std::size_t> in_use{0};
  std::atomic<std::size_t> reserved{0};
  std::atomic<std::size_t> limit{0};

  // exclusive in the hooks, shared in detail::pool_memory_of (every CUDA convolve)
  std::shared_mutex chunk_mutex;
  std::map<std::uintptr_t, chunk> chunks;  // by usable start address

  std::mutex stream_mutex;
  std::unordered_map<void*, stream_list> lists;  // libmarg streams only
  std::vector<batch> closed;
  std::size_t pending = 0;  // bytes in lists and closed batches

  std::size_t minimum = 0;             // bytes the arena reserves for itself at creation
  std::atomic<bool> limit_bad{false};  // MARG_POOL_LIMIT bad and not overridden
  std::string limit_error;             // the message for it (set before publication)
};

constexpr int max_pools = dev::max_devices;
// set once a pool is complete, for readers on any thread (pool_memory_of, deallocate)
std::atomic<pool_state*> g_published[max_pools];
std::atomic<int> g_count{0};                // pools published
std::atomic<int> g_end{0};                  // 1 + the highest index published
std::atomic<pool_state*> g_first{nullptr};  // the first one published

pool_state& state_of(extent_hooks_t* h) {
  static_assert(std::is_standard_layout_v<arena_hooks>);
  return *reinterpret_cast<arena_hooks*>(h)->state;
}

std::size_t align_up(std::size_t x, std::size_t a) {
  return (x + a - 1) / a * a;
}

// ---------------------------------------------------------------- mappings

chunk map_host(std::size_t bytes, std::size_t alignment, void*& base) {
  const std::size_t extra = alignment > host_page ? alignment : 0;
  void* raw =
      mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return {nullptr, 0, 0, 0, false};
  const auto r = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t b = align_up(r, alignment);
  // give back the slack on both sides
  if (b > r) munmap(raw, b - r);
  if (r + bytes + extra > b + bytes) munmap(reinterpret_cast<void*>(b + bytes), r + extra - b);
  base = reinterpret_cast<void*>(b);
  return {base, bytes, bytes, 0, false};
}

chunk map_managed(std::size_t bytes, std::size_t alignment, void*& base) {
  void* raw = dev::alloc_managed(bytes);
  if (raw != nullptr && reinterpret_cast<std::uintptr_t>(raw) % alignment == 0) {
    base = raw;
    return {raw, bytes, bytes, 0, true};
  }
  // not aligned enough: ask for more and align inside
  dev::free_managed(raw);
  raw = dev::alloc_managed(bytes + alignment);
  if (raw == nullptr) return {nullptr, 0, 0, 0, true};
  base = reinterpret_cast<void*>(align_up(reinterpret_cast<std::uintptr_t>(raw), alignment));
  return {raw, bytes + alignment, bytes, 0, true};
}

void unmap(const chunk& c) noexcept {
  if (c.managed)
    dev::free_managed(c.raw);
  else
    munmap(c.raw, c.raw_bytes);
}

// ---------------------------------------------------------------- hooks

void* hook_alloc(extent_hooks_t* h, void* new_addr, std::size_t bytes, std::size_t alignment,
                 bool* zero, bool* commit, unsigned) {
  if (new_addr != nullptr) return nullptr;  // no growth in place
  pool_state& s = state_of(h);
  // reserve against the cap first, so that concurrent hooks cannot overshoot it
  std::size_t r = s.reserved.load();
  do {
    const std::size_t lim = s.limit.load();
    if (bytes > lim || r > lim - bytes) return nullptr;
  } while (!s.reserved.compare_exchange_weak(r, r + bytes));
  void* base = nullptr;
  const chunk c =
      s.managed ? map_managed(bytes, alignment, base) : map_host(bytes, alignment, base);
  if (c.raw == nullptr) {
    s.reserved -= bytes;
    return nullptr;
  }
  if (c.managed && *zero) std::memset(base, 0, bytes);  // mmap memory is zero already
  if (!c.managed) *zero = true;
  *commit = true;
  try {
    const std::lock_guard lock(s.chunk_mutex);
    s.chunks.emplace(reinterpret_cast<std::uintptr_t>(base), c);
  } catch (...) {
    unmap(c);
    s.reserved -= bytes;
    return nullptr;
  }
  return base;
}

// the chunk holding [addr, addr + bytes), or chunks.end()
std::map<std::uintptr_t, chunk>::iterator find_chunk(pool_state& s, const void* addr,
                                                     std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  auto it = s.chunks.upper_bound(a);
  if (it == s.chunks.begin()) return s.chunks.end();
  --it;
  if (a + bytes > it->first + it->second.bytes) return s.chunks.end();
  return it;
}

bool hook_dalloc(extent_hooks_t* h, void* addr, std::size_t bytes, bool, unsigned) {
  pool_state& s = state_of(h);
  chunk gone{};
  {
    const std::lock_guard lock(s.chunk_mutex);
    const auto it = find_chunk(s, addr, bytes);
    if (it == s.chunks.end()) return true;  // not ours: let jemalloc keep it
    it->second.released += bytes;
    if (it->second.released < it->second.bytes) return false;  // rest still in use
    gone = it->second;
    s.chunks.erase(it);
  }
  unmap(gone);
  s.reserved -= gone.bytes;
  return false;
}

void hook_destroy(extent_hooks_t* h, void* addr, std::size_t bytes, bool committed, unsigned a) {
  (void)hook_dalloc(h, addr, bytes, committed, a);
}

bool hook_split(extent_hooks_t*, void*, std::size_t, std::size_t, std::size_t, bool, unsigned) {
  return false;  // pieces stay inside their chunk
}

bool hook_merge(extent_hooks_t* h, void* a, std::size_t bytes_a, void* b, std::size_t bytes_b, bool,
                unsigned) {
  pool_state& s = state_of(h);
  const std::lock_guard lock(s.chunk_mutex);
  const auto ia = find_chunk(s, a, bytes_a);
  return ia == s.chunks.end() || ia != find_chunk(s, b, bytes_b);  // true refuses
}

extent_hooks_t hooks = {hook_alloc, hook_dalloc, hook_destroy, nullptr,   nullptr,
                        nullptr,    nullptr,     hook_split,   hook_merge};

// ---------------------------------------------------------------- setup

std::size_t default_limit(bool managed) {
  if (managed) return dev::free_memory() / 10 * 8;  // 80 % of what the GPU has free now
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0) return std::size_t{1} << 34;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(size) / 2;
}

// Sets the initial limit once the arena exists: MARG_POOL_LIMIT when it is
// valid and at least the minimum, else the default (the current device's free
// memory) and an error that every allocation throws until set_pool_limit
// overrides it.
void set_initial_limit(pool_state& s) {
  s.limit = default_limit(s.managed);
  const detail::env_setting& e = detail::environment(detail::env_var::pool_limit);
  if (!e.present) return;
  if (!e.error.empty()) {
    s.limit_error = e.error;
  } else if (static_cast<std::size_t>(e.value) < s.minimum) {
    s.limit_error = detail::pool_limit_below_minimum(static_cast<std::size_t>(e.value), s.minimum);
  } else {
    s.limit = static_cast<std::size_t>(e.value);
    return;
  }
  s.limit_bad.store(true);
}

// the pool of device `index`; its device is current
pool_state* make_pool(int index) {
  auto s = std::make_unique<pool_state>();
  s->index = index;
  s->managed = dev::gpu_usable();
  // no cap while jemalloc builds the arena: its metadata comes through the
  // hooks, and what it takes is the smallest limit the pool can work under
  s->limit = ~std::size_t{0};
  s->hooks = {hooks, s.get()};  // set before the arena exists: hooks read it
  extent_hooks_t* h = &s->hooks.hooks;
  unsigned arena = 0;
  std::size_t len = sizeof(arena);
  if (const int rc = je_mallctl("arenas.create", &arena, &len, &h, sizeof(h)); rc != 0)
    throw out_of_memory("marg pool: jemalloc cannot create the arena (error " + std::to_string(rc) +
                        ")");
  s->arena = arena;
  s->minimum = s->reserved.load();
  set_initial_limit(*s);
  return s.release();  // never destroyed: blocks may be freed during static destruction
}

// the pool of device `index` (0 without a GPU), made on first use
pool_state& pool(int index) {
  if (pool_state* s = g_published[index].load(std::memory_order_acquire)) return *s;
  static std::mutex creation;
  const std::lock_guard lock(creation);
  if (pool_state* s = g_published[index].load(std::memory_order_acquire)) return *s;
  const detail::device_guard on(dev::gpu_usable() ? index : -1);
  pool_state* s = make_pool(index);
  g_published[index].store(s, std::memory_order_release);
  pool_state* none = nullptr;
  g_first.compare_exchange_strong(none, s);
  g_count.fetch_add(1);
  if (g_end.load() < index + 1) g_end.store(index + 1);  // under the creation lock
  return *s;
}

// the pool a call on `stream` uses: the stream's device, the current one for
// the default stream
int pool_index(stream_view stream) {
  if (!dev::gpu_usable()) return 0;
  return stream.is_default() ? dev::current() : dev::stream_device(stream.handle());
}

// the pool `device` names for the pool API: -1 the current device
int pool_index(const char* function, int device) {
  if (device == -1) return pool_index(stream_view{});
  const int count = dev::gpu_usable() ? std::max(device_count(), 1) : 1;
  MARG_EXPECTS(device >= 0 && device < std::min(count, max_pools),
               detail::bad_argument(
                   function, "device", device,
                   ("-1 (the current device) or in [0, " + std::to_string(count) + ")").c_str()));
  return device;
}

// the pool whose chunks hold `p`, or nullptr
pool_state* owner_of(const void* p) noexcept {
  if (g_count.load(std::memory_order_acquire) == 1) return g_first.load(std::memory_order_acquire);
  for (int i = 0, end = g_end.load(); i < end; ++i) {
    pool_state* s = g_published[i].load(std::memory_order_acquire);
    if (s == nullptr) continue;
    const std::shared_lock lock(s->chunk_mutex);
    if (find_chunk(*s, p, 1) != s->chunks.end()) return s;
  }
  return nullptr;
}

// ---------------------------------------------------------------- thread caches

// the calling thread's explicit jemalloc cache per pool: 0 none yet, -1
// gone, else id + 1
thread_local long tl_tcache[max_pools] = {};
thread_local bool tl_tcache_gone = false;

struct tcache_guard {
  ~tcache_guard() {
    for (long& t : tl_tcache) {
      if (t > 0) {
        unsigned id = static_cast<unsigned>(t - 1);
        (void)je_mallctl("tcache.destroy", nullptr, nullptr, &id, sizeof(id));
      }
      t = -1;  // frees later in this thread's exit go without a cache
    }
    tl_tcache_gone = true;
  }
};

int tcache_flag(const pool_state& s) {
  long& t = tl_tcache[s.index];
  if (t > 0) return MALLOCX_TCACHE(static_cast<unsigned>(t - 1));
  if (t < 0 || tl_tcache_gone) return MALLOCX_TCACHE_NONE;
  unsigned id = 0;
  std::size_t len = sizeof(id);
  if (je_mallctl("tcache.create", &id, &len, nullptr, 0) != 0) return MALLOCX_TCACHE_NONE;
  t = static_cast<long>(id) + 1;
  thread_local tcache_guard guard;  // destroys the caches at thread exit
  (void)guard;
  return MALLOCX_TCACHE(id);
}

void flush_thread_cache(const pool_state& s) noexcept {
  if (const long t = tl_tcache[s.index]; t > 0) {
    unsigned id = static_cast<unsigned>(t - 1);
    (void)je_mallctl("tcache.flush", nullptr, nullptr, &id, sizeof(id));
  }
}

void purge_arena(const pool_state& s) noexcept {
  const std::string name = "arena." + std::to_string(s.arena) + ".purge";
  (void)je_mallctl(name.c_str(), nullptr, nullptr, nullptr, 0);
}

// ---------------------------------------------------------------- stream order

std::size_t reap_threshold(const pool_state& s) {
  return std::min<std::size_t>(std::size_t{64} << 20, s.limit.load() / 8);
}

void release_blocks(const pool_state& s,
                    const std::vector<std::pair<void*, std::size_t>>& blocks) noexcept {
  const int flags = align_flag | tcache_flag(s);
  for (const auto& [p, n] : blocks) je_sdallocx(p, n, flags);
}

// Closes every thread stream's free list and returns to jemalloc the batches
// whose events completed (all of them, after waiting, when `wait`).
void reap(pool_state& s, bool wait) noexcept {
  std::vector<batch> work;
  {
    const std::lock_guard lock(s.stream_mutex);
    for (auto& [stream, list] : s.lists) {
      if (list.bytes == 0) continue;
      batch b{dev::record_event(stream), {}};
      for (auto& [n, ptrs] : list.blocks)
        for (void* p : ptrs) b.blocks.emplace_back(p, n);
      list.blocks.clear();
      list.bytes = 0;
      if (b.event == nullptr) dev::synchronize_quietly(stream);  // no event: wait instead
      s.closed.push_back(std::move(b));
    }
    work.swap(s.closed);
  }
  std::vector<std::pair<void*, std::size_t>> done;
  std::vector<batch> keep;
  for (batch& b : work) {
    // a batch without event was ordered by synchronizing its stream
    if (b.event != nullptr && !wait && !dev::event_done(b.event)) {
      keep.push_back(std::move(b));
      continue;
    }
    if (b.event != nullptr) {
      if (wait)
        dev::wait_and_release_event(b.event);
      else
        dev::release_event(b.event);
    }
    done.insert(done.end(), b.blocks.begin(), b.blocks.end());
  }
  std::size_t freed = 0;
  for (const auto& blk : done) freed += blk.second;
  {
    const std::lock_guard lock(s.stream_mutex);
    for (batch& b : keep) s.closed.push_back(std::move(b));
    s.pending -= freed;
  }
  release_blocks(s, done);
}

// a block of size class n freed earlier on the thread stream `stream`, or nullptr
void* take_from_list(pool_state& s, void* stream, std::size_t n) {
  const std::lock_guard lock(s.stream_mutex);
  const auto it = s.lists.find(stream);
  if (it == s.lists.end()) return nullptr;
  const auto blk = it->second.blocks.find(n);
  if (blk == it->second.blocks.end() || blk->second.empty()) return nullptr;
  void* p = blk->second.back();
  blk->second.pop_back();
  it->second.bytes -= n;
  s.pending -= n;
  return p;
}

// parks a block freed on `sv` until stream order allows its reuse; false when
// it can go back to jemalloc at once
bool park(pool_state& s, void* p, std::size_t n, stream_view sv) noexcept {
  void* stream = nullptr;
  try {
    stream = dev::resolve_stream(sv.handle());
  } catch (...) {
    return false;  // the thread has no stream: no work was ordered on it
  }
  try {
    if (dev::own_stream(stream)) {
      const std::lock_guard lock(s.stream_mutex);
      stream_list& list = s.lists[stream];
      list.blocks[n].push_back(p);
      list.bytes += n;
      s.pending += n;
      return true;
    }
    void* event = dev::record_event(stream);
    if (event == nullptr) {
      dev::synchronize_quietly(stream);
      return false;
    }
    const std::lock_guard lock(s.stream_mutex);
    s.closed.push_back({event, {{p, n}}});
    s.pending += n;
    return true;
  } catch (...) {  // bad_alloc of the bookkeeping: order by waiting instead
    dev::synchronize_quietly(stream);
    return false;
  }
}

std::string bytes_text(std::size_t b) {
  return std::to_string(b) + " bytes";
}

}  // namespace

// ---------------------------------------------------------------- public

void* allocate(std::size_t bytes, stream_view stream) {
  if (bytes == 0) return nullptr;
  pool_state& s = pool(pool_index(stream));
  if (s.limit_bad.load()) throw marg::invalid_argument(s.limit_error);
  const std::size_t n = je_nallocx(bytes, align_flag);  // 0 when too large for jemalloc
  if (n != 0 && s.managed) {
    if (void* p = take_from_list(s, dev::resolve_stream(stream.handle()), n)) {
      s.in_use += n;
      return p;
    }
    bool reap_now = false;
    {
      const std::lock_guard lock(s.stream_mutex);
      reap_now = s.pending > reap_threshold(s);
    }
    if (reap_now) reap(s, false);
  }
  const int flags = align_flag | MALLOCX_ARENA(s.arena) | tcache_flag(s);
  void* p = n == 0 ? nullptr : je_mallocx(bytes, flags);
  if (p == nullptr && n != 0) {
    // give back everything cached, then try once more
    reap(s, true);
    flush_thread_cache(s);
    purge_arena(s);
    p = je_mallocx(bytes, flags);
  }
  if (p == nullptr) {
    const std::size_t lim = s.limit.load(), res = s.reserved.load();
    // the pool hands out size classes: say what the request became
    const std::size_t rounded = je_nallocx(bytes, flags);
    throw out_of_memory(
        "marg::allocate: requested " + bytes_text(bytes) +
        (s.managed ? " on CUDA device " + std::to_string(s.index) : std::string()) +
        (rounded > bytes ? " (" + bytes_text(rounded) + " as a pool size class)" : std::string()) +
        ", available " + bytes_text(lim > res ? lim - res : 0) + " (pool limit " + bytes_text(lim) +
        ", reserved " + bytes_text(res) + ", in use " + bytes_text(s.in_use.load()) + ")");
  }
  s.in_use += n;
  return p;
}

void deallocate(void* ptr, std::size_t bytes, stream_view stream) noexcept {
  if (ptr == nullptr) return;
  pool_state* owner = owner_of(ptr);  // a block exists, so its pool does
  if (owner == nullptr) return;       // not a pool block: nothing to give back
  pool_state& s = *owner;
  const std::size_t n = je_nallocx(bytes, align_flag);
  s.in_use -= n;
  if (s.managed && park(s, ptr, n, stream)) return;
  je_sdallocx(ptr, n, align_flag | tcache_flag(s));
}

pool_statistics pool_stats(int device) {
  pool_state& s = pool(pool_index("marg::pool_stats", device));
  return {s.in_use.load(), s.reserved.load(), s.limit.load()};
}

void set_pool_limit(std::size_t bytes, int device) {
  MARG_EXPECTS(bytes >= 1, detail::bad_argument("marg::set_pool_limit", "bytes",
                                                static_cast<std::int64_t>(bytes), ">= 1"));
  pool_state& s = pool(pool_index("marg::set_pool_limit", device));
  detail::env_override(detail::env_var::pool_limit);
  s.limit.store(bytes);
  s.limit_bad.store(false);
}

std::size_t pool_minimum_limit() {
  return pool(pool_index(stream_view{})).minimum;
}

std::size_t pool_limit(int device) {
  return pool(pool_index("marg::pool_limit", device)).limit.load();
}

void pool_trim() {
  if (g_count.load() == 0) (void)pool(pool_index(stream_view{}));
  for (int i = 0, end = g_end.load(); i < end; ++i) {
    pool_state* s = g_published[i].load(std::memory_order_acquire);
    if (s == nullptr) continue;
    if (s->managed) reap(*s, true);
    flush_thread_cache(*s);
    purge_arena(*s);
  }
}

namespace detail {

pool_memory pool_memory_of(const void* p) noexcept {
  if (p == nullptr) return pool_memory::none;
  for (int i = 0, end = g_end.load(); i < end; ++i) {
    pool_state* s = g_published[i].load(std::memory_order_acquire);
    if (s == nullptr) continue;
    const std::shared_lock lock(s->chunk_mutex);
    const auto it = find_chunk(*s, p, 1);
    if (it != s->chunks.end()) return it->second.managed ? pool_memory::managed : pool_memory::host;
  }
  return pool_memory::none;
}

}  // namespace detail

}  // namespace marg
