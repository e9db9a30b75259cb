#pragma once
/// \file
/// Collections: named groups of tensors with their own save and reduction
/// configuration, as in smdebug, plus exclude regexes (smdebug has none).
/// Regexes are compiled when added (core/detail/pattern.hpp).

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/save_config.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/reduction_config.hpp"

namespace tdbg {

/// smdebug's CollectionKeys: the names with a meaning of their own.
namespace collection_names {
inline constexpr std::string_view all = "all";
inline constexpr std::string_view default_collection = "default";
inline constexpr std::string_view weights = "weights";
inline constexpr std::string_view biases = "biases";
inline constexpr std::string_view gradients = "gradients";
inline constexpr std::string_view losses = "losses";
inline constexpr std::string_view metrics = "metrics";
inline constexpr std::string_view inputs = "inputs";
inline constexpr std::string_view outputs = "outputs";
inline constexpr std::string_view layers = "layers";
inline constexpr std::string_view sm_metrics = "sm_metrics";
inline constexpr std::string_view optimizer_variables = "optimizer_variables";
inline constexpr std::string_view tensorflow_summaries = "tensorflow_summaries";
inline constexpr std::string_view feature_importance = "feature_importance";
inline constexpr std::string_view average_shap = "average_shap";
} // namespace collection_names

/// smdebug's SCALAR_COLLECTIONS: no reductions, no histograms; TensorBoard scalars.
[[nodiscard]] inline bool is_scalar_collection(std::string_view name) noexcept {
    namespace n = collection_names;
    return name == n::losses || name == n::metrics || name == n::feature_importance || name == n::average_shap ||
           name == n::sm_metrics;
}

/// smdebug's NON_REDUCTION_COLLECTIONS (= NON_HISTOGRAM_COLLECTIONS): saved raw, never reduced or histogrammed.
[[nodiscard]] inline bool is_raw_only_collection(std::string_view name) noexcept {
    return is_scalar_collection(name) || name == collection_names::tensorflow_summaries;
}

/// Collections smdebug never saves in EVAL or PREDICT mode.
[[nodiscard]] inline bool is_training_only_collection(std::string_view name) noexcept {
    return name == collection_names::gradients || name == collection_names::optimizer_variables;
}

/// The collections every hook starts with, with the default regexes of
/// smdebug's PyTorch hook (whose tensor names tdbg's examples follow):
/// all, default, weights, biases, gradients, losses.
[[nodiscard]] inline const std::array<std::pair<std::string_view, std::string_view>, 6>& builtin_collections() noexcept {
    static const std::array<std::pair<std::string_view, std::string_view>, 6> table{{
        {collection_names::all, ""},
        {collection_names::default_collection, ""},
        {collection_names::weights, "^(?!gradient).*weight"},
        {collection_names::biases, "^(?!gradient).*bias"},
        {collection_names::gradients, "^gradient"},
        {collection_names::losses, "[Ll]oss_(?!input).*output"},
    }};
    return table;
}

/// True for the names of builtin_collections().
[[nodiscard]] inline bool is_builtin_collection(std::string_view name) noexcept {
    for (const auto& entry : builtin_collections()) {
        if (entry.first == name) {
            return true;
        }
    }
    return false;
}

/// Computes a fixed list of reductions of a tensor (a compiled reduction set); the
/// results come in the order of the collection's reduction_config().all().
using reduction_kernel = std::function<std::vector<tensor_value>(const tensor_value&)>;

/// A named group of tensors: the tensors whose names match an include regex
/// and no exclude regex, plus the names added explicitly. It may carry its own
/// save config and reduction config; without them the hook's apply.
class collection {
public:
    /// An empty collection; throws config_error for an empty name.
    TDBG_DECL explicit collection(std::string name);

    /// The name.
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

    /// Adds an include regex (searched anywhere in the name, like Python's re.search).
    TDBG_DECL collection& include(std::string regex);
    /// Adds several include regexes.
    TDBG_DECL collection& include(const std::vector<std::string>& regexes);
    /// Adds an exclude regex: a name it matches is left out even when an include regex matches.
    /// Names added with add_tensor_name are not filtered.
    TDBG_DECL collection& exclude(std::string regex);
    /// Adds several exclude regexes.
    TDBG_DECL collection& exclude(const std::vector<std::string>& regexes);
    /// Adds one tensor by its exact name.
    TDBG_DECL collection& add_tensor_name(std::string tensor);

    /// The include regexes, in the order added.
    [[nodiscard]] TDBG_DECL std::vector<std::string> include_regex() const;
    /// The exclude regexes, in the order added.
    [[nodiscard]] TDBG_DECL std::vector<std::string> exclude_regex() const;
    /// The tensor names known to belong here (explicit ones and the matched ones the hook has seen), sorted.
    [[nodiscard]] const std::set<std::string>& tensor_names() const noexcept { return tensor_names_; }
    /// True when `tensor` was added or seen as a member.
    [[nodiscard]] TDBG_DECL bool has_tensor_name(std::string_view tensor) const;

    /// True when `tensor` belongs here: listed by name, or matched by an include and no exclude regex.
    [[nodiscard]] TDBG_DECL bool contains(std::string_view tensor) const;
    /// True when an include regex and no exclude regex match `tensor`.
    [[nodiscard]] TDBG_DECL bool matches_regex(std::string_view tensor) const;

    /// The collection's own save config, if any.
    [[nodiscard]] const std::optional<::tdbg::save_config>& save_config() const noexcept { return save_config_; }
    /// Sets the collection's own save config; modes it leaves unset take the hook's.
    TDBG_DECL collection& set_save_config(::tdbg::save_config config);
    /// The same schedule for every mode.
    TDBG_DECL collection& set_save_config(const save_config_mode& every_mode);

    /// The collection's own reduction config, if any.
    [[nodiscard]] const std::optional<::tdbg::reduction_config>& reduction_config() const noexcept {
        return reduction_config_;
    }
    /// Sets the reduction config (computed at run time in one fused pass).
    TDBG_DECL collection& set_reduction_config(::tdbg::reduction_config config);
    /// Sets the reduction config together with a compiled kernel that computes
    /// exactly `config.all()` (set_reduction_set below is the usual way in).
    TDBG_DECL collection& set_reduction_config(::tdbg::reduction_config config, reduction_kernel kernel);
    /// Computes the reductions of a compile-time set, `Set` = tdbg::reduce::reduction_set<...>
    /// (reduce/reduction_set.hpp), through its fused one-pass kernel:
    /// `c.set_reduction_set<reduction_set<reduce::max, reduce::abs_l2>>(true)`.
    template <class Set>
    collection& set_reduction_set(bool save_raw_tensor = false, bool save_shape = false) {
        ::tdbg::reduction_config config;
        for (const reduction r : Set::reductions) {
            config.add(r);
        }
        config.save_raw_tensor = save_raw_tensor;
        config.save_shape = save_shape;
        const std::vector<reduction> order = config.all();
        return set_reduction_config(std::move(config), [order](const tensor_value& value) {
            const auto computed = Set::compute(value);
            std::vector<tensor_value> out;
            out.reserve(order.size());
            for (const reduction r : order) {
                const auto at = std::find(Set::reductions.begin(), Set::reductions.end(), r);
                out.push_back(computed[static_cast<std::size_t>(at - Set::reductions.begin())]);
            }
            return out;
        });
    }
    /// The compiled kernel, when one was given.
    [[nodiscard]] const reduction_kernel& kernel() const noexcept { return kernel_; }

    /// Whether TensorBoard histograms are written for this collection's tensors.
    [[nodiscard]] bool save_histogram() const noexcept { return save_histogram_; }
    /// Turns TensorBoard histograms on or off.
    collection& set_save_histogram(bool on) noexcept {
        save_histogram_ = on;
        histogram_set_ = true;
        return *this;
    }

    /// Merges `other` into this one (JSON configurations and hook options do
    /// this): its regexes and names are appended, its configs and save_histogram replace ours when set.
    TDBG_DECL void merge(const collection& other);

private:

    std::string name_;
    std::vector<detail::pattern> include_;
    std::vector<detail::pattern> exclude_;
    std::set<std::string> tensor_names_;
    std::optional<::tdbg::save_config> save_config_;
    std::optional<::tdbg::reduction_config> reduction_config_;
    reduction_kernel kernel_;
    bool save_histogram_ = true;
    bool histogram_set_ = false;
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/hook/impl/collection.ipp"
#endif
