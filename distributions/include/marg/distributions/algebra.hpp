/// @file algebra.hpp
/// @brief Sums, differences, negation and shifts of independent pmfs.
///
/// x + y is the law of the sum of independent x and y: its support is
/// [x.lower + y.lower, x.upper + y.upper] and its probabilities come from
/// marg::convolve (direct summation: every element, tails included, has a
/// relative error of about (terms) * epsilon).
///
/// Renormalization: the exact result has the total mass of the inputs (1);
/// direct summation leaves it within a few epsilon. The total is summed in
/// long double (O(m + n), beside the O(m n) convolution) and the result is
/// divided by it only when it drifted by more than 16 epsilon of T, which
/// happens in long float sums and deep trees. Otherwise the convolution's
/// output is returned unchanged.
///
/// Truncation: when inputs are truncated (pmf::truncated_mass() t_x, t_y), the
/// result is the sum conditioned on both kept supports and reports
/// t = 1 - (1 - t_x)(1 - t_y).
///
/// Every operation throws marg::invalid_argument for an empty operand, when a
/// support bound overflows int64, or when the result would exceed INT_MAX
/// values (the numeric layer's m + n - 1 limit).
#pragma once

#include <cstdint>
#include <vector>

#include <marg/distributions/pmf.hpp>

namespace marg {

/// The law of x + y for independent x, y.
/// @param x first term
/// @param y second term
/// @return pmf on [x.lower() + y.lower(), x.upper() + y.upper()]
template <class T>
pmf<T> operator+(const pmf<T>& x, const pmf<T>& y);

/// The law of x - y for independent x, y (x + (-y)).
/// @param x first term
/// @param y subtracted term
/// @return pmf on [x.lower() - y.upper(), x.upper() - y.lower()]
template <class T>
pmf<T> operator-(const pmf<T>& x, const pmf<T>& y);

/// The law of -x.
/// @param x the pmf
/// @return pmf on [-x.upper(), -x.lower()]
template <class T>
pmf<T> operator-(const pmf<T>& x);

/// The law of x + k (O(1), shares storage).
/// @param x the pmf
/// @param k the shift
/// @return pmf on [x.lower() + k, x.upper() + k]
template <class T>
pmf<T> operator+(const pmf<T>& x, std::int64_t k);

/// The law of k + x (O(1), shares storage).
/// @param k the shift
/// @param x the pmf
/// @return pmf on [x.lower() + k, x.upper() + k]
template <class T>
pmf<T> operator+(std::int64_t k, const pmf<T>& x);

/// The law of x - k (O(1), shares storage).
/// @param x the pmf
/// @param k the shift
/// @return pmf on [x.lower() - k, x.upper() - k]
template <class T>
pmf<T> operator-(const pmf<T>& x, std::int64_t k);

/// The law of k - x.
/// @param k the value
/// @param x the pmf
/// @return pmf on [k - x.upper(), k - x.lower()]
template <class T>
pmf<T> operator-(std::int64_t k, const pmf<T>& x);

/// The law of the sum of independent terms, as a balanced tree of pairwise
/// convolutions. Each level sorts its terms by length and pairs neighbours;
/// all pairs of one level with equal lengths run in one
/// marg::convolve_batched call (one launch on CUDA), reading the previous
/// level's outputs in place when they are evenly strided. Intermediate rows
/// stay where the backend wrote them (device memory on CUDA) and are not
/// renormalized; the result is, once, when its total drifted from 1 by more
/// than 16 epsilon (scaling commutes with convolution).
/// @param xs the terms (none empty); an empty vector gives delta(0)
/// @return the pmf of the sum
template <class T>
pmf<T> sum(const std::vector<pmf<T>>& xs);

}  // namespace marg
