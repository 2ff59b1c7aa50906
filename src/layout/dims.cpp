#include "layout/dims.hpp"

#include <cstring>
#include <string>

#include "common/errors.hpp"

namespace gts {

int spatial_axis(const dim_label& label) {
  if (label[1] != '\0') return -1;
  switch (label[0]) {
    case 'I':
      return 0;
    case 'J':
      return 1;
    case 'K':
      return 2;
    default:
      return -1;
  }
}

int data_dim_number(const dim_label& label) {
  if (spatial_axis(label) >= 0) return -1;
  return std::atoi(label.data());
}

namespace {

dim_label make_label(const std::string& token, const char* text) {
  const std::string shown = std::string(" in '") + text + "'";
  if (token.empty()) fail_arg("dims", "empty label" + shown);
  dim_label label{};
  if (token == "I" || token == "J" || token == "K") {
    label[0] = token[0];
    return label;
  }
  for (char c : token) {
    if (c < '0' || c > '9') {
      std::string what = "unknown label '" + token;
      what += "'" + shown + "; labels are I, J, K and data dims 0, 1, …";
      fail_arg("dims", what);
    }
  }
  if (token.size() > 2 || (token.size() == 2 && token[0] == '0') || std::stoi(token) >= max_ndim) {
    fail_arg("dims", "data dim label '" + token + "'" + shown + " must be 0 … " +
                         std::to_string(max_ndim - 1));
  }
  std::memcpy(label.data(), token.c_str(), token.size() + 1);
  return label;
}

}  // namespace

// GT4Py's default labels for every ndim, built once: "IJK"[:ndim], then "0", "1", ….
const dim_labels& default_dims() {
  static const dim_labels labels = [] {
    dim_labels l{};
    for (int d = 0; d < max_ndim; ++d) {
      if (d < 3) {
        l[d][0] = "IJK"[d];
      } else {
        const std::string s = std::to_string(d - 3);
        std::memcpy(l[d].data(), s.c_str(), s.size() + 1);
      }
    }
    return l;
  }();
  return labels;
}

dim_labels parse_dims(const char* text, int ndim) {
  if (text == nullptr) return default_dims();  // entries past ndim are ignored by every reader
  dim_labels labels{};
  const bool comma_separated = std::strchr(text, ',') != nullptr;
  int count = 0;
  auto push = [&](const std::string& token) {
    if (count >= ndim) {
      fail_arg("dims",
               "'" + std::string(text) + "' has more labels than ndim = " + std::to_string(ndim));
    }
    labels[count++] = make_label(token, text);
  };
  if (comma_separated) {
    std::string token;
    for (const char* p = text;; ++p) {
      if (*p == ',' || *p == '\0') {
        push(token);
        token.clear();
        if (*p == '\0') break;
      } else if (*p != ' ') {
        token += *p;
      }
    }
  } else {
    for (const char* p = text; *p != '\0'; ++p) push(std::string(1, *p));
  }
  if (count != ndim) {
    fail_arg("dims", "'" + std::string(text) + "' has " + std::to_string(count) +
                         " labels but ndim = " + std::to_string(ndim));
  }
  for (int a = 0; a < ndim; ++a) {
    for (int b = a + 1; b < ndim; ++b) {
      if (labels[a] == labels[b]) {
        fail_arg("dims",
                 "duplicate label '" + std::string(labels[a].data()) + "' in '" + text + "'");
      }
    }
  }
  return labels;
}

}  // namespace gts
