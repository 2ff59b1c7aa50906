// Semantic dimension labels: "I", "J", "K" and data dims "0", "1", …, each at most once.
#pragma once

#include <array>
#include <cstdint>

#include "common/limits.hpp"

namespace gts {

/// One label, NUL-terminated ("I", "J", "K", "0" … "15").
using dim_label = std::array<char, 4>;
using dim_labels = std::array<dim_label, max_ndim>;

/// Axis number of a label: 0, 1, 2 for I, J, K; -1 for a data dim.
int spatial_axis(const dim_label& label);
/// Number of a data dim label ("3" -> 3), -1 for I/J/K.
int data_dim_number(const dim_label& label);

/// Parses @p text ("IJK", "KJI0", "I,J,K,0,10") into @p ndim labels; NULL gives GT4Py's defaults
/// ("IJK"[:ndim], then "0", "1", …). Throws invalid_argument naming "dims".
dim_labels parse_dims(const char* text, int ndim);

}  // namespace gts
