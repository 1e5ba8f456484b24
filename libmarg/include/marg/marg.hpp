/// @file marg.hpp
/// @brief Umbrella header of libmarg: everything in namespace marg.
#pragma once

#include <marg/distributions/algebra.hpp>
#include <marg/distributions/batch.hpp>
#include <marg/distributions/conditioning.hpp>
#include <marg/distributions/factories.hpp>
#include <marg/distributions/gradients.hpp>
#include <marg/distributions/pmf.hpp>
#include <marg/numeric/array.hpp>
#include <marg/numeric/backend.hpp>
#include <marg/numeric/cancel.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/device.hpp>
#include <marg/numeric/environment.hpp>
#include <marg/numeric/error.hpp>
#include <marg/numeric/graph.hpp>
#include <marg/numeric/log_convolve.hpp>
#include <marg/numeric/parallel.hpp>
#include <marg/numeric/planner.hpp>
#include <marg/numeric/pool.hpp>
#include <marg/numeric/stream.hpp>
#include <marg/version.hpp>
