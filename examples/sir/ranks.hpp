// The SIR filter's processes: one, or the ranks of an MPI job (`mpirun -np R
// sir ...`, Open MPI). Each rank holds a contiguous slice of the particles;
// what the filter needs across them goes through the few collectives here.
// Sums over particles are taken in fixed point (fixed_bits fractional bits,
// 128-bit integers): integer addition is associative, so a sum is the same
// number for any split of the particles over ranks and threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#ifdef MARG_SIR_MPI
#include <mpi.h>
#endif

namespace sir_ranks {

/// A fixed-point number: value * 2^fixed_bits in a 128-bit integer.
__extension__ typedef __int128 fixed;

/// Fractional bits: a sum of up to 2^26 values in [0, 1] stays below 2^127.
constexpr int fixed_bits = 100;

/// x in [0, 1] (or scaled into it) to fixed point, truncated.
inline fixed to_fixed(double x) {
  return static_cast<fixed>(std::ldexp(x, fixed_bits));
}

/// A fixed-point value to double, rounded to nearest.
inline double from_fixed(fixed f) {
  return std::ldexp(static_cast<double>(f), -fixed_bits);
}

/// q * total for q in [0, 1], to 50 bits of q: the same integer on every rank.
inline fixed fraction_of(fixed total, double q) {
  return (total >> 50) * static_cast<fixed>(std::ldexp(q, 50));
}

/// The processes of the run: MPI's world when the program was started by
/// mpirun (and built with MPI), else this process alone.
class ranks {
 public:
  /// Joins the MPI job when started by mpirun (Open MPI, or a PMI launcher).
  ranks(int* argc, char*** argv) {
#ifdef MARG_SIR_MPI
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
        std::getenv("PMIX_RANK")) {
      MPI_Init(argc, argv);
      mpi_ = true;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &size_);
      MPI_Comm local;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
      MPI_Comm_rank(local, &local_rank_);
      MPI_Comm_free(&local);
      MPI_Type_contiguous(sizeof(fixed), MPI_BYTE, &fixed_type_);
      MPI_Type_commit(&fixed_type_);
      MPI_Op_create(&add_fixed, 1, &add_op_);
    }
#else
    (void)argc, (void)argv;
#endif
  }
  ~ranks() {
#ifdef MARG_SIR_MPI
    if (mpi_) {
      MPI_Op_free(&add_op_);
      MPI_Type_free(&fixed_type_);
      MPI_Finalize();
    }
#endif
  }
  ranks(const ranks&) = delete;
  ranks& operator=(const ranks&) = delete;

  /// This process's rank in [0, size()).
  int rank() const {
    return rank_;
  }
  /// The number of ranks.
  int size() const {
    return size_;
  }
  /// The rank among those on this host (its GPU: local_rank mod the device count).
  int local_rank() const {
    return local_rank_;
  }
  /// Rank 0: the one that prints and writes.
  bool root() const {
    return rank_ == 0;
  }

  /// The first of the particles [0, B) that rank r holds (rank r: [first(B, r), first(B, r + 1))).
  std::int64_t first(std::int64_t B, int r) const {
    return B * r / size_;
  }

  /// Ends the whole job (every rank) with `status`.
  [[noreturn]] void abort(int status) const {
#ifdef MARG_SIR_MPI
    if (mpi_) MPI_Abort(MPI_COMM_WORLD, status);
#endif
    std::exit(status);
  }

  /// The largest of the ranks' x.
  double max(double x) const {
    return reduce(x, max_op);
  }
  /// The smallest of the ranks' x.
  std::int64_t min(std::int64_t x) const {
    return reduce(x, min_op);
  }
  /// The largest of the ranks' x.
  std::int64_t max(std::int64_t x) const {
    return reduce(x, max_op);
  }

  /// Element-wise sums over the ranks of v, in place on every rank.
  void sum(std::vector<fixed>& v) const {
#ifdef MARG_SIR_MPI
    if (mpi_ && !v.empty())
      MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), fixed_type_, add_op_,
                    MPI_COMM_WORLD);
#else
    (void)v;
#endif
  }
  /// The sum over the ranks of x.
  fixed sum(fixed x) const {
    std::vector<fixed> v{x};
    sum(v);
    return v[0];
  }
  /// The sum of x over the ranks before this one (0 on rank 0).
  fixed sum_before(fixed x) const {
#ifdef MARG_SIR_MPI
    if (mpi_) {
      fixed r = 0;
      MPI_Exscan(&x, &r, 1, fixed_type_, add_op_, MPI_COMM_WORLD);
      return rank_ == 0 ? fixed{0} : r;
    }
#endif
    (void)x;
    return 0;
  }

  /// Sends records of `record_bytes` bytes: send holds counts[d] records for
  /// rank d, d = 0, 1, ... in order. Returns the records sent to this rank, in
  /// the order of their senders' ranks.
  std::vector<char> exchange(const std::vector<char>& send, const std::vector<std::int64_t>& counts,
                             std::size_t record_bytes) const {
#ifdef MARG_SIR_MPI
    if (mpi_) {
      std::vector<int> sc(size_), rc(size_), sd(size_), rd(size_);
      for (int d = 0; d < size_; ++d) sc[d] = static_cast<int>(counts[d]);
      MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, MPI_COMM_WORLD);
      std::int64_t s = 0, r = 0;
      for (int d = 0; d < size_; ++d) {
        sd[d] = static_cast<int>(s), rd[d] = static_cast<int>(r);
        s += sc[d], r += rc[d];
      }
      std::vector<char> recv(static_cast<std::size_t>(r) * record_bytes);
      MPI_Datatype record;
      MPI_Type_contiguous(static_cast<int>(record_bytes), MPI_BYTE, &record);
      MPI_Type_commit(&record);
      MPI_Alltoallv(send.data(), sc.data(), sd.data(), record, recv.data(), rc.data(), rd.data(),
                    record, MPI_COMM_WORLD);
      MPI_Type_free(&record);
      return recv;
    }
#endif
    (void)counts, (void)record_bytes;
    return send;
  }

  /// On rank 0, fn(values) for each rank's `local` in rank order (one rank's
  /// values in memory at a time); the other ranks send theirs.
  template <class F>
  void each_on_root(const std::vector<double>& local, F&& fn) const {
#ifdef MARG_SIR_MPI
    if (mpi_) {
      if (!root()) {
        const auto n = static_cast<std::int64_t>(local.size());
        MPI_Send(&n, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD);
        MPI_Send(local.data(), static_cast<int>(n), MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
        return;
      }
      fn(local);
      for (int r = 1; r < size_; ++r) {
        std::int64_t n = 0;
        MPI_Recv(&n, 1, MPI_INT64_T, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::vector<double> v(static_cast<std::size_t>(n));
        MPI_Recv(v.data(), static_cast<int>(n), MPI_DOUBLE, r, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        fn(v);
      }
      return;
    }
#endif
    fn(local);
  }

 private:
  enum op_kind { min_op, max_op };
  template <class T>
  T reduce(T x, op_kind op) const {
#ifdef MARG_SIR_MPI
    if (mpi_) {
      T r{};
      MPI_Datatype t = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_INT64_T;
      MPI_Allreduce(&x, &r, 1, t, op == min_op ? MPI_MIN : MPI_MAX, MPI_COMM_WORLD);
      return r;
    }
#else
    (void)op;
#endif
    return x;
  }
#ifdef MARG_SIR_MPI
  static void add_fixed(void* in, void* inout, int* len, MPI_Datatype*) {
    for (int k = 0; k < *len; ++k) {
      fixed a, b;
      std::memcpy(&a, static_cast<char*>(in) + k * sizeof(fixed), sizeof a);
      std::memcpy(&b, static_cast<char*>(inout) + k * sizeof(fixed), sizeof b);
      b += a;
      std::memcpy(static_cast<char*>(inout) + k * sizeof(fixed), &b, sizeof b);
    }
  }
  bool mpi_ = false;
  MPI_Datatype fixed_type_ = MPI_DATATYPE_NULL;
  MPI_Op add_op_ = MPI_OP_NULL;
#endif
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

}  // namespace sir_ranks
