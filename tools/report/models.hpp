#pragma once
// The models of a run, as the page of `tdbg report` tells them apart, and how a cap on the
// tensors shown (a section's, the page's) is shared among them, so that no model is left off.
//
// A model is told by the prefix of its parameters' names. smdebug's PyTorch hook, and
// tdbg::torch_hook after it, names a parameter `<Class>_<module path>.<name>` (the class
// name, or the name given to register_module: `Generator_conv1.weight`) and its gradient
// `gradient/<Class>_...`. So a model is the text before the first '_' of a name (less a
// leading "gradient/") where that text is a plain word (letters and digits) and the rest is
// a module path with a dot; every tensor whose name (less "gradient/") starts with a
// model's word and '_' belongs to it (`Generator_output_0` too). The other tensors (a run
// without such names, a loss module's output) belong to no model: a run without prefixes
// is one model.

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tdbg::cli::report {

/// `name` without the "gradient/" of a gradient's name.
inline std::string_view without_gradient_prefix(std::string_view name) {
    constexpr std::string_view gradient = "gradient/";
    return name.substr(0, gradient.size()) == gradient ? name.substr(gradient.size()) : name;
}

/// The model a parameter's (or its gradient's) name declares: "Generator" of
/// "gradient/Generator_conv1.weight"; empty when the name is not `<word>_<path>.<name>`.
inline std::string_view declared_model(std::string_view name) {
    name = without_gradient_prefix(name);
    const std::size_t underscore = name.find('_');
    if (underscore == std::string_view::npos || underscore == 0) {
        return {};
    }
    const std::string_view word = name.substr(0, underscore);
    const std::string_view path = name.substr(underscore + 1);
    const bool plain = std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0;
    });
    const bool module_path = path.find('.') != std::string_view::npos && path.find('/') == std::string_view::npos;
    return plain && module_path ? word : std::string_view{};
}

/// The models the tensors `names` declare, in name order.
inline std::vector<std::string> models_of(const std::vector<std::string>& names) {
    std::set<std::string> models;
    for (const std::string& name : names) {
        const std::string_view model = declared_model(name);
        if (!model.empty()) {
            models.emplace(model);
        }
    }
    return {models.begin(), models.end()};
}

/// The model of tensor `name` among `models` (models_of a run's names): the one its name,
/// less "gradient/", starts with, followed by '_'; empty for a tensor of no model.
inline std::string model_of(std::string_view name, const std::vector<std::string>& models) {
    name = without_gradient_prefix(name);
    const std::size_t underscore = name.find('_');
    if (underscore == std::string_view::npos) {
        return {};
    }
    const std::string_view word = name.substr(0, underscore);
    return std::binary_search(models.begin(), models.end(), word) ? std::string(word) : std::string();
}

/// What a section showed of one model's tensors.
struct model_share {
    std::string model; ///< empty for the tensors of no model
    std::size_t shown = 0;
    std::size_t total = 0;
    std::string first_left_out; ///< the first of its tensors not shown, in name order (empty when all are)
};

/// Keeps at most `cap` of `tensors` (a section's, in name order), the cap shared among their
/// models: the models are served from the one with the fewest tensors, each getting an even
/// share (rounded up) of what is left, so a share a small model does not need goes to the
/// larger ones. Each model keeps its first tensors in name order; `tensors` keeps its order.
/// Returns what each model showed: the models in name order, the tensors of no model last.
inline std::vector<model_share> share_cap(std::vector<std::string>& tensors, const std::vector<std::string>& models,
                                          std::size_t cap) {
    std::map<std::string, std::vector<std::size_t>> members; // model -> its tensors' indices
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        members[model_of(tensors[i], models)].push_back(i);
    }
    std::vector<model_share> shares;
    for (const auto& [model, indices] : members) {
        shares.push_back(model_share{model, 0, indices.size(), {}});
    }
    // The tensors of no model (the empty name, first in the map) are listed last.
    std::rotate(shares.begin(), std::find_if(shares.begin(), shares.end(), [](const model_share& s) {
                    return !s.model.empty();
                }), shares.end());
    std::vector<model_share*> smallest_first;
    for (model_share& s : shares) {
        smallest_first.push_back(&s);
    }
    std::stable_sort(smallest_first.begin(), smallest_first.end(),
                     [](const model_share* a, const model_share* b) { return a->total < b->total; });
    std::size_t left = cap;
    for (std::size_t i = 0; i < smallest_first.size(); ++i) {
        const std::size_t models_left = smallest_first.size() - i;
        const std::size_t even = (left + models_left - 1) / models_left;
        smallest_first[i]->shown = std::min(smallest_first[i]->total, even);
        left -= smallest_first[i]->shown;
    }
    std::vector<bool> keep(tensors.size(), false);
    for (model_share& s : shares) {
        const std::vector<std::size_t>& indices = members[s.model];
        for (std::size_t k = 0; k < s.shown; ++k) {
            keep[indices[k]] = true;
        }
        if (s.shown < indices.size()) {
            s.first_left_out = tensors[indices[s.shown]];
        }
    }
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        if (keep[i]) {
            kept.push_back(std::move(tensors[i]));
        }
    }
    tensors = std::move(kept);
    return shares;
}

} // namespace tdbg::cli::report
