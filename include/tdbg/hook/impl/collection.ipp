#pragma once
/// \file
/// Definitions of tdbg/hook/collection.hpp.

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/hook/collection.hpp"

namespace tdbg {

namespace detail {

inline std::vector<std::string> pattern_texts(const std::vector<pattern>& list) {
    std::vector<std::string> out;
    out.reserve(list.size());
    for (const auto& p : list) {
        out.push_back(p.text());
    }
    return out;
}

} // namespace detail

TDBG_DECL collection::collection(std::string name) : name_(std::move(name)) {
    if (name_.empty()) {
        throw config_error("a collection needs a non-empty name");
    }
}

TDBG_DECL collection& collection::include(std::string regex) {
    include_.emplace_back(std::move(regex), fmt::format("collection '{}'", name_));
    return *this;
}

TDBG_DECL collection& collection::include(const std::vector<std::string>& regexes) {
    for (const auto& r : regexes) {
        include(r);
    }
    return *this;
}

TDBG_DECL collection& collection::exclude(std::string regex) {
    exclude_.emplace_back(std::move(regex), fmt::format("collection '{}'", name_));
    return *this;
}

TDBG_DECL collection& collection::exclude(const std::vector<std::string>& regexes) {
    for (const auto& r : regexes) {
        exclude(r);
    }
    return *this;
}

TDBG_DECL collection& collection::add_tensor_name(std::string tensor) {
    tensor_names_.insert(std::move(tensor));
    return *this;
}

TDBG_DECL std::vector<std::string> collection::include_regex() const { return detail::pattern_texts(include_); }

TDBG_DECL std::vector<std::string> collection::exclude_regex() const { return detail::pattern_texts(exclude_); }

TDBG_DECL bool collection::has_tensor_name(std::string_view tensor) const {
    return tensor_names_.find(std::string(tensor)) != tensor_names_.end();
}

TDBG_DECL bool collection::contains(std::string_view tensor) const {
    return has_tensor_name(tensor) || matches_regex(tensor);
}

TDBG_DECL bool collection::matches_regex(std::string_view tensor) const {
    const auto matches = [&](const detail::pattern& p) { return p.search(tensor); };
    return std::any_of(include_.begin(), include_.end(), matches) &&
           std::none_of(exclude_.begin(), exclude_.end(), matches);
}

TDBG_DECL collection& collection::set_save_config(::tdbg::save_config config) {
    save_config_ = std::move(config);
    return *this;
}

TDBG_DECL collection& collection::set_save_config(const save_config_mode& every_mode) {
    return set_save_config(::tdbg::save_config(every_mode));
}

TDBG_DECL collection& collection::set_reduction_config(::tdbg::reduction_config config) {
    config.validate();
    reduction_config_ = std::move(config);
    kernel_ = nullptr;
    return *this;
}

TDBG_DECL collection& collection::set_reduction_config(::tdbg::reduction_config config, reduction_kernel kernel) {
    set_reduction_config(std::move(config));
    kernel_ = std::move(kernel);
    return *this;
}

TDBG_DECL void collection::merge(const collection& other) {
    include_.insert(include_.end(), other.include_.begin(), other.include_.end());
    exclude_.insert(exclude_.end(), other.exclude_.begin(), other.exclude_.end());
    tensor_names_.insert(other.tensor_names_.begin(), other.tensor_names_.end());
    if (other.save_config_) {
        save_config_ = other.save_config_;
    }
    if (other.reduction_config_) {
        reduction_config_ = other.reduction_config_;
        kernel_ = other.kernel_;
    }
    if (other.histogram_set_) {
        save_histogram_ = other.save_histogram_;
    }
}

} // namespace tdbg
