#pragma once
/// \file
/// Definitions of tdbg/reduce/compute.hpp.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/interface_base.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/reduce/detail/parallel.hpp"
#include "tdbg/reduce/partial.hpp"

namespace tdbg {

template <class T>
void compute_reduction_values_of(const tensor_value& value, const std::vector<reduction>& which,
                                 const reduce::options& opts, std::vector<reduction_value>& out) {
    if (value.type() != dtype_of<T>::value) {
        throw error(fmt::format("compute_reductions_of<{}> given a {} tensor", dtype_name(dtype_of<T>::value),
                                dtype_name(value.type())));
    }
    if (which.empty()) {
        return;
    }
    if constexpr (std::is_same_v<T, std::string>) {
        throw dtype_mismatch(
            fmt::format("reduction {} needs a numeric tensor, found a str tensor", reduction_name(which.front())));
    } else {
        const auto partial = reduce::accumulate(value.data_as<T>(), value.size(), which, opts);
        for (const reduction r : which) {
            out.push_back(partial.value(r, opts.ddof));
        }
    }
}

template <class T>
std::vector<tensor_value> compute_reductions_of(const tensor_value& value, const std::vector<reduction>& which,
                                                const reduce::options& opts) {
    std::vector<reduction_value> values;
    values.reserve(which.size());
    compute_reduction_values_of<T>(value, which, opts, values);
    std::vector<tensor_value> out;
    out.reserve(values.size());
    for (const reduction_value& v : values) {
        out.push_back(v.to_tensor());
    }
    return out;
}

TDBG_DECL std::vector<tensor_value> compute_reductions(const tensor_value& value, const std::vector<reduction>& which,
                                                      const reduce::options& opts) {
    return visit_dtype(value.type(), [&](auto tag) {
        return compute_reductions_of<typename decltype(tag)::type>(value, which, opts);
    });
}

TDBG_DECL void compute_reduction_values(const tensor_value& value, const std::vector<reduction>& which,
                                        const reduce::options& opts, std::vector<reduction_value>& out) {
    visit_dtype(value.type(), [&](auto tag) {
        compute_reduction_values_of<typename decltype(tag)::type>(value, which, opts, out);
    });
}

TDBG_DECL tensor_value compute_reduction(const tensor_value& value, reduction r) {
    return std::move(compute_reductions(value, std::vector<reduction>{r}).front());
}

static_assert(running_reductions::piece_elements == detail::chunk_size,
              "running_reductions' pieces are the kernels' chunks: results bit for bit those of one pass");

namespace detail {

/// running_reductions' state for one element type.
class running_reductions_base : public interface_base {
public:    virtual void add(const tensor_value& piece, const std::vector<reduction>& which, const reduce::options& opts) = 0;
    [[nodiscard]] virtual std::uint64_t count() const noexcept = 0;
    [[nodiscard]] virtual std::vector<tensor_value> results(const std::vector<reduction>& which,
                                                            const reduce::options& opts) const = 0;
    [[nodiscard]] virtual dtype type() const noexcept = 0;
};

template <class T>
class running_reductions_of final : public running_reductions_base {
public:
    void add(const tensor_value& piece, const std::vector<reduction>& which, const reduce::options& opts) override {
        const auto part = reduce::accumulate(piece.data_as<T>(), piece.size(), which, opts);
        if (total_) {
            total_->merge(part);
        } else {
            total_ = part;
        }
    }
    [[nodiscard]] std::uint64_t count() const noexcept override { return total_ ? total_->count() : 0; }
    [[nodiscard]] std::vector<tensor_value> results(const std::vector<reduction>& which,
                                                    const reduce::options& opts) const override {
        if (!total_) { // nothing added: the reductions of an empty tensor
            return compute_reductions(tensor_value::from_bytes(dtype_of<T>::value, {0}, {}), which, opts);
        }
        std::vector<tensor_value> out;
        out.reserve(which.size());
        for (const reduction r : which) {
            out.push_back(total_->result(r, opts.ddof));
        }
        return out;
    }
    [[nodiscard]] dtype type() const noexcept override { return dtype_of<T>::value; }

private:
    std::optional<reduce::partial<T>> total_;
};

} // namespace detail

TDBG_DECL running_reductions::running_reductions(std::vector<reduction> which, reduce::options opts)
    : which_(std::move(which)), opts_(opts) {}
TDBG_DECL running_reductions::running_reductions(running_reductions&&) noexcept = default;
TDBG_DECL running_reductions& running_reductions::operator=(running_reductions&&) noexcept = default;
TDBG_DECL running_reductions::~running_reductions() = default;

TDBG_DECL void running_reductions::add(const tensor_value& piece) {
    if (!state_) {
        state_ = visit_dtype(piece.type(), [&](auto tag) -> std::unique_ptr<detail::running_reductions_base> {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same_v<T, std::string>) {
                throw dtype_mismatch("reductions need a numeric tensor, found a str tensor");
            } else {
                return std::make_unique<detail::running_reductions_of<T>>();
            }
        });
    } else if (piece.type() != state_->type()) {
        throw error(fmt::format("running_reductions: a {} piece after {} ones", dtype_name(piece.type()),
                                dtype_name(state_->type())));
    }
    if (piece.size() > 0) {
        state_->add(piece, which_, opts_);
    }
}

TDBG_DECL std::uint64_t running_reductions::count() const noexcept { return state_ ? state_->count() : 0; }

TDBG_DECL std::vector<tensor_value> running_reductions::results() const {
    if (!state_) {
        throw error("running_reductions: no piece was added (the dtype is unknown)");
    }
    return state_->results(which_, opts_);
}

} // namespace tdbg
