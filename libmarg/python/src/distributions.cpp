// The distributions layer in Python: Pmf (float64) and Pmf32, PmfBatch and
// PmfBatch32, the factories, sums, conditioning, sampling and gradients.
// Results that are vectors come back as numpy arrays; random draws take
// their uniforms from a numpy Generator (anything with .random(size)).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/operators.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <marg/marg.hpp>

#include "module.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace marg::python {
namespace {

template <class T>
using host_array = nb::ndarray<nb::numpy, T>;

/// A numpy array that owns a copy of `values` (shape `rows` x `cols`, or 1-D
/// when rows < 0).
template <class T>
nb::object to_numpy(std::vector<T>&& values, std::int64_t rows = -1, std::int64_t cols = 0) {
  auto* v = new std::vector<T>(std::move(values));
  nb::capsule owner(v, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  if (rows < 0) {
    const std::size_t shape[1] = {v->size()};
    return nb::cast(host_array<T>(v->data(), 1, shape, owner));
  }
  const std::size_t shape[2] = {static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)};
  return nb::cast(host_array<T>(v->data(), 2, shape, owner));
}

/// `count` uniforms in [0, 1) from a numpy Generator (or anything whose
/// .random(size) returns an array of floats).
std::vector<double> uniforms(nb::handle rng, std::size_t count) {
  nb::object u = rng.attr("random")(count);
  nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu> a;
  if (!nb::try_cast(u, a, true) || a.shape(0) != count)
    throw nb::type_error("rng.random(size) must return that many float64 values");
  return std::vector<double>(a.data(), a.data() + count);
}

nb::object default_rng(nb::handle rng) {
  if (!rng.is_none()) return nb::borrow(rng);
  return nb::module_::import_("numpy.random").attr("default_rng")();
}

/// T from a dtype name: "float64" (default) or "float32".
template <class F>
nb::object by_dtype(const std::string& dtype, F&& f) {
  if (dtype == "float64" || dtype == "double" || dtype == "f8") return f(double{});
  if (dtype == "float32" || dtype == "float" || dtype == "f4") return f(float{});
  throw nb::value_error(("marg: dtype = '" + dtype + "' (must be 'float64' or 'float32')").c_str());
}

template <class T>
std::vector<T> to_type(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
void bind_pmf(nb::module_& m, const char* name, const char* batch_name) {
  using P = marg::pmf<T>;
  using B = marg::pmf_batch<T>;
  const std::string suffix = std::is_same_v<T, float> ? "32" : "";

  nb::class_<P>(m, name,
                "A probability mass function on the integers lower..upper (immutable; "
                "copies share storage).")
      .def_prop_ro("lower", &P::lower, "The smallest value of the support.")
      .def_prop_ro("upper", &P::upper, "The largest value of the support.")
      .def_prop_ro("size", &P::size, "Number of values, upper - lower + 1.")
      .def_prop_ro("truncated_mass", &P::truncated_mass,
                   "Mass the untruncated law puts outside the support (0 unless truncated).")
      .def_prop_ro("empty", &P::empty, "True for the posterior of an impossible observation.")
      .def_prop_ro_static(
          "dtype", [](nb::handle) { return std::is_same_v<T, float> ? "float32" : "float64"; })
      .def(
          "probs", [](const P& x) { return to_numpy<T>(x.probs()); },
          "The probabilities of lower..upper (a numpy copy).")
      .def(
          "log_probs", [](const P& x) { return to_numpy<T>(x.log_probs()); },
          "The log-probabilities of lower..upper (a numpy copy), finite wherever the "
          "probability is non-zero.")
      .def("prob", &P::prob, "k"_a, "P(X = k); 0 outside the support.")
      .def("log_prob", &P::log_prob, "k"_a, "log P(X = k); -inf outside the support.")
      .def("cdf", &P::cdf, "k"_a, "P(X <= k).")
      .def("mean", &P::mean, "E[X].")
      .def("variance", &P::variance, "Var[X].")
      .def(
          "sample",
          [](const P& x, nb::handle rng) {
            const double u = uniforms(default_rng(rng), 1)[0];
            return x.lower() + x.sample_index(u);
          },
          "rng"_a = nb::none(),
          "One draw by inversion, its uniform from rng (a numpy Generator; default: a new one).")
      .def(nb::self + nb::self, "The law of X + Y (X, Y independent).")
      .def(nb::self - nb::self, "The law of X - Y (X, Y independent).")
      .def(-nb::self, "The law of -X.")
      .def(nb::self + std::int64_t(), "The law of X + k.")
      .def(std::int64_t() + nb::self, "The law of k + X.")
      .def(nb::self - std::int64_t(), "The law of X - k.")
      .def(std::int64_t() - nb::self, "The law of k - X.")
      .def("__len__", [](const P& x) { return x.size(); })
      .def("__repr__", [name](const P& x) {
        if (x.empty()) return std::string("marg.") + name + "(empty)";
        return std::string("marg.") + name + "(lower=" + std::to_string(x.lower()) +
               ", upper=" + std::to_string(x.upper()) + ")";
      });

  nb::class_<marg::sum_posterior<T>>(
      m, ("SumPosterior" + suffix).c_str(),
      "The result of observing a sum: log_likelihood, first, second.")
      .def_ro("log_likelihood", &marg::sum_posterior<T>::log_likelihood,
              "log P(evidence); -inf when impossible.")
      .def_ro("first", &marg::sum_posterior<T>::first, "Posterior of x.")
      .def_ro("second", &marg::sum_posterior<T>::second, "Posterior of y.");

  m.def(
      "sum", [](const std::vector<P>& xs) { return marg::sum(xs); }, "pmfs"_a,
      "The law of the sum of independent pmfs (balanced tree of convolutions).");
  m.def(
      "log_prob_sum",
      [](const P& x, const P& y, std::int64_t k) { return marg::log_prob_sum(x, y, k); }, "x"_a,
      "y"_a, "k"_a, "log P(x + y = k) in O(min(m, n)), without forming x + y.");
  m.def(
      "condition_on_sum",
      [](const P& x, const P& y, std::int64_t k) { return marg::condition_on_sum(x, y, k); }, "x"_a,
      "y"_a, "k"_a, "Posteriors of x and y given x + y = k (hard evidence).");
  m.def(
      "condition_on_sum",
      [](const P& x, const P& y, const std::vector<T>& likelihood) {
        return marg::condition_on_sum(x, y, likelihood);
      },
      "x"_a, "y"_a, "likelihood"_a,
      "Posteriors of x and y given soft evidence L over the support of x + y "
      "(x.size + y.size - 1 values).");
  m.def(
      "condition_on_sum_log",
      [](const P& x, const P& y, const std::vector<T>& log_likelihood) {
        return marg::condition_on_sum_log(x, y, log_likelihood);
      },
      "x"_a, "y"_a, "log_likelihood"_a,
      "As condition_on_sum with soft evidence given as log-likelihoods.");
  m.def(
      "sample_given_sum",
      [](const P& x, const P& y, std::int64_t k, nb::handle rng) {
        const double u = uniforms(default_rng(rng), 1)[0];
        marg::sum_posterior<T> post;
        {
          nb::gil_scoped_release release;
          post = marg::condition_on_sum(x, y, k);
        }
        if (post.first.empty())
          throw nb::value_error(
              ("marg.sample_given_sum: k = " + std::to_string(k) + " is impossible").c_str());
        const std::int64_t j = post.first.lower() + post.first.sample_index(u);
        return std::pair<std::int64_t, std::int64_t>(j, k - j);
      },
      "x"_a, "y"_a, "k"_a, "rng"_a = nb::none(), "A joint draw (x, y) given x + y = k.");
  m.def(
      "sum_grad",
      [](const P& x, const P& y, const std::vector<T>& g) {
        auto r = marg::sum_grad(x, y, g);
        return std::make_pair(to_numpy<T>(std::move(r.first)), to_numpy<T>(std::move(r.second)));
      },
      "x"_a, "y"_a, "g"_a, "(df/dp, df/dq) given g = df/dr over the support of x + y.");
  m.def(
      "log_prob_sum_grad",
      [](const P& x, const P& y, std::int64_t k) {
        auto r = marg::log_prob_sum_grad(x, y, k);
        return std::make_pair(to_numpy<T>(std::move(r.first)), to_numpy<T>(std::move(r.second)));
      },
      "x"_a, "y"_a, "k"_a, "Gradient of log_prob_sum(x, y, k) with respect to p and q.");

  // ---- batches of pmfs (particles) ----
  nb::class_<B>(m, batch_name,
                "A batch of pmfs with per-row lower bounds and a common padded length.")
      .def(nb::init<const std::vector<P>&>(), "rows"_a, "A batch from pmfs (padded with zeros).")
      .def(
          "__init__",
          [](B* self, nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu> values,
             nb::object lowers, bool normalize) {
            const int batch = static_cast<int>(values.shape(0));
            const int length = static_cast<int>(values.shape(1));
            std::vector<std::int64_t> lo(static_cast<std::size_t>(batch), 0);
            if (!lowers.is_none()) lo = nb::cast<std::vector<std::int64_t>>(lowers);
            std::vector<T> v(values.data(), values.data() + values.size());
            new (self) B(batch, length, std::move(lo), v, normalize);
          },
          "values"_a, "lowers"_a = nb::none(), "normalize"_a = false,
          "A batch from a 2-D array of probabilities (or weights with normalize=True).")
      .def_prop_ro("batch", &B::batch, "Number of rows.")
      .def_prop_ro("length", &B::length, "Padded row length.")
      .def_prop_ro(
          "lowers",
          [](const B& x) { return to_numpy<std::int64_t>(std::vector<std::int64_t>(x.lowers())); },
          "The lower bound of every row.")
      .def(
          "probs",
          [](const B& x) {
            std::vector<T> v(static_cast<std::size_t>(x.batch()) * x.length());
            marg::synchronize();
            if (!v.empty()) std::memcpy(v.data(), x.data(), v.size() * sizeof(T));
            return to_numpy<T>(std::move(v), x.batch(), x.length());
          },
          "The row-major probabilities (a numpy copy, batch x length).")
      .def("prob", &B::prob, "b"_a, "k"_a, "P(X_b = k).")
      .def(
          "log_probs",
          [](const B& x) {
            const std::size_t n = static_cast<std::size_t>(x.batch()) * x.length();
            std::vector<T> v(n);
            marg::synchronize();
            if (x.log_data() != nullptr)
              std::copy(x.log_data(), x.log_data() + n, v.begin());
            else
              std::transform(x.data(), x.data() + n, v.begin(), [](T p) { return std::log(p); });
            return to_numpy<T>(std::move(v), x.batch(), x.length());
          },
          "The row-major log-probabilities (a numpy copy, batch x length): finite wherever a "
          "probability is non-zero, also below the type's range; -inf at zeros and padding.")
      .def("log_prob", &B::log_prob, "b"_a, "k"_a,
           "log P(X_b = k), finite wherever it is non-zero (also below the type's range).")
      .def("row_has_log_probs", &B::row_has_log_probs, "b"_a,
           "Whether row b keeps log-probabilities (it has values below the type's range).")
      .def("row", &B::row, "b"_a, "Row b as a pmf.")
      .def("truncated_mass", &B::truncated_mass, "b"_a, "Truncated mass of row b.")
      .def(
          "sample",
          [](const B& x, nb::handle rng, int per_row) {
            auto u = uniforms(default_rng(rng), static_cast<std::size_t>(x.batch()) * per_row);
            std::vector<std::int64_t> r;
            {
              nb::gil_scoped_release release;
              r = x.sample_with(u, per_row);
            }
            return to_numpy<std::int64_t>(std::move(r));
          },
          "rng"_a = nb::none(), "per_row"_a = 1, "per_row draws from every row (row-major).")
      .def(nb::self + nb::self, "Row-wise x_b + y_b (y may have 1 row, shared).")
      .def(nb::self + P(), "Row-wise x_b + y for one pmf y.")
      .def(nb::self - nb::self, "Row-wise x_b - y_b.")
      .def(-nb::self, "Row-wise -x_b.")
      .def("__len__", &B::batch)
      .def("__repr__", [batch_name](const B& x) {
        return std::string("marg.") + batch_name + "(batch=" + std::to_string(x.batch()) +
               ", length=" + std::to_string(x.length()) + ")";
      });

  using BP = marg::batch_sum_posterior<T>;
  nb::class_<BP>(m, ("BatchSumPosterior" + suffix).c_str(),
                 "Per-row log likelihoods and posterior batches.")
      .def_prop_ro("log_likelihood",
                   [](const BP& r) { return to_numpy<T>(std::vector<T>(r.log_likelihood)); })
      .def_ro("first", &BP::first)
      .def_ro("second", &BP::second);
  using BD = marg::batch_joint_draws<T>;
  nb::class_<BD>(m, ("BatchJointDraws" + suffix).c_str(),
                 "Per-row log likelihoods and joint draws.")
      .def_prop_ro("log_likelihood",
                   [](const BD& r) { return to_numpy<T>(std::vector<T>(r.log_likelihood)); })
      .def_prop_ro(
          "first",
          [](const BD& r) { return to_numpy<std::int64_t>(std::vector<std::int64_t>(r.first)); })
      .def_prop_ro("second", [](const BD& r) {
        return to_numpy<std::int64_t>(std::vector<std::int64_t>(r.second));
      });

  m.def(
      "log_prob_sum",
      [](const B& x, const B& y, const std::vector<std::int64_t>& k) {
        std::vector<T> r;
        {
          nb::gil_scoped_release release;
          r = marg::log_prob_sum(x, y, k);
        }
        return to_numpy<T>(std::move(r));
      },
      "x"_a, "y"_a, "k"_a, "Row-wise log P(x_b + y_b = k_b).");
  m.def(
      "condition_on_sum",
      [](const B& x, const B& y, const std::vector<std::int64_t>& k) {
        nb::gil_scoped_release release;
        return marg::condition_on_sum(x, y, k);
      },
      "x"_a, "y"_a, "k"_a, "Row-wise posteriors given x_b + y_b = k_b.");
  m.def(
      "condition_on_sum",
      [](const B& x, const B& y,
         nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu> likelihood) {
        std::vector<T> l(likelihood.data(), likelihood.data() + likelihood.size());
        nb::gil_scoped_release release;
        return marg::condition_on_sum(x, y, l);
      },
      "x"_a, "y"_a, "likelihood"_a,
      "Row-wise posteriors given soft evidence (batch x (x.length + y.length - 1)).");
  m.def(
      "sum_grad",
      [](const B& x, const B& y,
         nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu> g) {
        std::vector<T> gv(g.data(), g.data() + g.size());
        marg::batch_sum_gradient<T> r;
        {
          nb::gil_scoped_release release;
          r = marg::sum_grad(x, y, gv);
        }
        const int b = x.batch();
        return std::make_pair(to_numpy<T>(std::move(r.first), b, x.length()),
                              to_numpy<T>(std::move(r.second), b, y.length()));
      },
      "x"_a, "y"_a, "g"_a, "Row-wise (df/dp, df/dq), each batch x length.");
  m.def(
      "sample_given_sum",
      [](const B& x, const B& y, const std::vector<std::int64_t>& k, nb::handle rng) {
        auto u = uniforms(default_rng(rng), 2 * static_cast<std::size_t>(x.batch()));
        nb::gil_scoped_release release;
        return marg::detail::sample_given_sum_with(x, y, k, u);
      },
      "x"_a, "y"_a, "k"_a, "rng"_a = nb::none(),
      "Row-wise joint draws given x_b + y_b = k_b (log_likelihood -inf where impossible).");
  m.def(
      "sample_given_evidence",
      [](const B& x, const B& y,
         nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu> likelihood,
         nb::handle rng) {
        std::vector<T> l(likelihood.data(), likelihood.data() + likelihood.size());
        auto u = uniforms(default_rng(rng), 2 * static_cast<std::size_t>(x.batch()));
        nb::gil_scoped_release release;
        return marg::detail::sample_given_evidence_with(x, y, l, u);
      },
      "x"_a, "y"_a, "likelihood"_a, "rng"_a = nb::none(),
      "Row-wise joint draws given soft evidence on the sums.");
}

}  // namespace

void bind_distributions(nb::module_& m) {
  bind_pmf<double>(m, "Pmf", "PmfBatch");
  bind_pmf<float>(m, "Pmf32", "PmfBatch32");

  m.def(
      "categorical",
      [](const std::vector<double>& weights, std::int64_t lower, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          return nb::cast(marg::categorical<T>(to_type<T>(weights), lower));
        });
      },
      "weights"_a, "lower"_a = 0, "dtype"_a = "float64",
      "The law proportional to weights on lower, lower+1, ...");
  m.def(
      "categorical_log",
      [](const std::vector<double>& log_weights, std::int64_t lower, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          return nb::cast(marg::categorical_log<T>(to_type<T>(log_weights), lower));
        });
      },
      "log_weights"_a, "lower"_a = 0, "dtype"_a = "float64",
      "The law proportional to exp(log_weights) on lower, lower+1, ...");
  m.def(
      "bernoulli",
      [](double p, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          return nb::cast(marg::bernoulli<T>(static_cast<T>(p)));
        });
      },
      "p"_a, "dtype"_a = "float64", "Bernoulli(p) on {0, 1}.");
  m.def(
      "binomial",
      [](std::int64_t n, double p, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          return nb::cast(marg::binomial<T>(n, static_cast<T>(p)));
        });
      },
      "n"_a, "p"_a, "dtype"_a = "float64", "Binomial(n, p) on {0..n}.");
  m.def(
      "uniform_int",
      [](std::int64_t a, std::int64_t b, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          return nb::cast(marg::uniform_int<T>(a, b));
        });
      },
      "a"_a, "b"_a, "dtype"_a = "float64", "The uniform law on {a..b}.");
  m.def(
      "beta_binomial",
      [](std::int64_t n, double a, double b, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          return nb::cast(marg::beta_binomial<T>(n, static_cast<T>(a), static_cast<T>(b)));
        });
      },
      "n"_a, "a"_a, "b"_a, "dtype"_a = "float64", "BetaBinomial(n, a, b) on {0..n}.");
  m.def(
      "poisson",
      [](double lam, nb::object tail, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          const T tl = tail.is_none() ? marg::default_tail<T>() : nb::cast<T>(tail);
          return nb::cast(marg::poisson<T>(static_cast<T>(lam), tl));
        });
      },
      "lam"_a, "tail"_a = nb::none(), "dtype"_a = "float64",
      "Poisson(lam), truncated where the remaining mass falls below tail.");
  m.def(
      "geometric",
      [](double p, nb::object tail, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          const T tl = tail.is_none() ? marg::default_tail<T>() : nb::cast<T>(tail);
          return nb::cast(marg::geometric<T>(static_cast<T>(p), tl));
        });
      },
      "p"_a, "tail"_a = nb::none(), "dtype"_a = "float64",
      "Geometric(p) (failures before the first success), truncated below tail.");
  m.def(
      "negative_binomial",
      [](double r, double p, nb::object tail, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          const T tl = tail.is_none() ? marg::default_tail<T>() : nb::cast<T>(tail);
          return nb::cast(marg::negative_binomial<T>(static_cast<T>(r), static_cast<T>(p), tl));
        });
      },
      "r"_a, "p"_a, "tail"_a = nb::none(), "dtype"_a = "float64",
      "NegativeBinomial(r, p), truncated below tail.");
  m.def(
      "delta",
      [](std::int64_t k, const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          return nb::cast(marg::delta<T>(k));
        });
      },
      "k"_a, "dtype"_a = "float64", "The point mass at k.");
  m.def(
      "binomial_batch",
      [](const std::vector<std::int64_t>& ns, const std::vector<double>& ps, double tail,
         const std::string& dtype) {
        return by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          return nb::cast(marg::binomial_batch<T>(ns, ps, tail));
        });
      },
      "ns"_a, "ps"_a, "tail"_a = 1e-17, "dtype"_a = "float64",
      "A PmfBatch of Binomial(ns[b], ps[b]), each trimmed to the window that keeps all "
      "but tail at each end.");
}

}  // namespace marg::python
