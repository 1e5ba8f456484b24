// Persistent worker threads for parallel_chunks: starting threads on every call
// costs as much as the work for mid-size problems (a 2048 x 2048 product would
// gain nothing from a second thread).
#include <marg/numeric/parallel.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace marg::detail {
namespace {

class worker_pool {
 public:
  // never destroyed: detached workers may still wait on it at exit
  static worker_pool& get() {
    static worker_pool* pool = new worker_pool;
    return *pool;
  }

  bool run(int tasks, void (*call)(void*, int), void* context) {
    // a nested call from inside a task (on a worker or on the caller, which
    // holds busy_: try_lock by its owner would be undefined)
    if (in_task) return false;
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    in_task = true;
    struct reset {
      ~reset() { in_task = false; }
    } reset_in_task;
    {
      std::unique_lock<std::mutex> lock(m_);
      grow(tasks - 1);
      // no worker may still be inside the previous job when this one is set up
      idle_.wait(lock, [&] { return active_ == 0; });
      call_ = call;
      context_ = context;
      chunks_ = tasks;
      next_.store(0);
      done_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    const int mine = drain();
    std::unique_lock<std::mutex> lock(m_);
    done_ += mine;
    idle_.wait(lock, [&] { return done_ == chunks_ && active_ == 0; });
    return true;
  }

 private:
  // takes chunks until none is left; the job's fields are stable while it runs
  int drain() {
    int n = 0;
    for (int c = next_.fetch_add(1); c < chunks_; c = next_.fetch_add(1)) {
      call_(context_, c);
      ++n;
    }
    return n;
  }

  void grow(int workers) {  // under m_
    for (int i = started_; i < workers; ++i) std::thread([this] { work(); }).detach();
    started_ = std::max(started_, workers);
  }

  void work() {
    in_task = true;  // for good: a worker's nested calls fork their own threads
    std::unique_lock<std::mutex> lock(m_);
    std::uint64_t seen = generation_;
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (next_.load() >= chunks_) continue;  // already drained by others
      ++active_;
      lock.unlock();
      const int n = drain();
      lock.lock();
      done_ += n;
      --active_;
      idle_.notify_all();
    }
  }

  static thread_local bool in_task;
  std::mutex busy_;  // one job at a time
  std::mutex m_;     // guards everything below but next_
  std::condition_variable wake_, idle_;
  int started_ = 0;
  void (*call_)(void*, int) = nullptr;
  void* context_ = nullptr;
  int chunks_ = 0;
  std::atomic<int> next_{0};
  int done_ = 0;
  int active_ = 0;
  std::uint64_t generation_ = 0;
};

thread_local bool worker_pool::in_task = false;

}  // namespace

bool run_on_workers(int tasks, void (*call)(void*, int), void* context) {
  return worker_pool::get().run(tasks, call, context);
}

}  // namespace marg::detail
