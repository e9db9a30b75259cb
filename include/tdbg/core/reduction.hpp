#pragma once
/// \file
/// The names of reductions: the nine kinds, each plain or on absolute values,
/// and the spellings smdebug uses for them ("l2_norm", "abs_mean", ...).

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"

namespace tdbg {

/// What a reduction computes. std and variance use ddof=0; l1 and l2 are
/// element-wise norms over all elements.
enum class reduction_kind { min, max, mean, std, variance, sum, prod, l1, l2 };

/// Every kind, in smdebug's order.
inline constexpr std::array<reduction_kind, 9> all_reduction_kinds{
    reduction_kind::min,      reduction_kind::max, reduction_kind::mean, reduction_kind::std, reduction_kind::variance,
    reduction_kind::sum,      reduction_kind::prod, reduction_kind::l1,  reduction_kind::l2};

/// "min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2".
[[nodiscard]] constexpr std::string_view reduction_kind_name(reduction_kind k) noexcept {
    switch (k) {
    case reduction_kind::min: return "min";
    case reduction_kind::max: return "max";
    case reduction_kind::mean: return "mean";
    case reduction_kind::std: return "std";
    case reduction_kind::variance: return "variance";
    case reduction_kind::sum: return "sum";
    case reduction_kind::prod: return "prod";
    case reduction_kind::l1: return "l1";
    case reduction_kind::l2: return "l2";
    }
    return "min";
}

/// True for l1 and l2 (smdebug calls them norms).
[[nodiscard]] constexpr bool is_norm(reduction_kind k) noexcept {
    return k == reduction_kind::l1 || k == reduction_kind::l2;
}

/// One reduction: a kind, on the values or on their absolute values.
struct reduction {
    reduction_kind kind = reduction_kind::min;
    bool abs = false;

    friend constexpr bool operator==(reduction a, reduction b) noexcept { return a.kind == b.kind && a.abs == b.abs; }
    friend constexpr bool operator!=(reduction a, reduction b) noexcept { return !(a == b); }
    friend constexpr bool operator<(reduction a, reduction b) noexcept {
        return a.abs != b.abs ? !a.abs : a.kind < b.kind;
    }
};

/// The name used in reduction tensor names: "mean", "abs_l2".
[[nodiscard]] inline std::string reduction_name(reduction r) {
    return (r.abs ? "abs_" : "") + std::string(reduction_kind_name(r.kind));
}

/// The spelling smdebug writes in collection files: "mean", "abs_mean", "l2_norm", "abs_l1_norm".
[[nodiscard]] inline std::string reduction_config_name(reduction r) {
    return reduction_name(r) + (is_norm(r.kind) ? "_norm" : "");
}

/// Parses any spelling: "mean", "abs_mean", "l1", "l2_norm", "abs_l2_norm".
[[nodiscard]] inline std::optional<reduction> parse_reduction(std::string_view text) noexcept {
    reduction r;
    constexpr std::string_view abs_prefix = "abs_";
    if (text.substr(0, abs_prefix.size()) == abs_prefix) {
        r.abs = true;
        text.remove_prefix(abs_prefix.size());
    }
    constexpr std::string_view norm_suffix = "_norm";
    if (text.size() > norm_suffix.size() && text.substr(text.size() - norm_suffix.size()) == norm_suffix) {
        text.remove_suffix(norm_suffix.size());
        if (text != "l1" && text != "l2") {
            return std::nullopt;
        }
    }
    for (reduction_kind k : all_reduction_kinds) {
        if (reduction_kind_name(k) == text) {
            r.kind = k;
            return r;
        }
    }
    return std::nullopt;
}

/// The items of a comma-separated list ("min, abs_max,l2_norm"), trimmed of
/// spaces and tabs; empty items are skipped. The one reader of smdebug's list
/// spellings (reduction configs, collection files, the command line).
[[nodiscard]] TDBG_DECL std::vector<std::string_view> split_list(std::string_view text);

/// Parses a comma-separated list of reductions in any spelling parse_reduction
/// accepts ("min,max,abs_mean,l2_norm"; items as split_list gives them). Throws
/// config_error naming an unknown item and the list.
[[nodiscard]] TDBG_DECL std::vector<reduction> parse_reduction_list(std::string_view text);

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/core/impl/reduction.ipp"
#endif
