#pragma once
/// \file
/// LossNotDecreasing: met when a loss has not gone down by at least
/// `diff_percent` percent over `num_steps` steps.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `use_losses_collection` (bool, True),
/// `num_steps` (int, 10), `diff_percent` (float, 0.0), `mode` (None).
/// Tensors: the union of the lists and, with use_losses_collection and when
/// the run has it, the "losses" collection; only single-element values count.
/// Mode: `mode`, else the first of EVAL, TRAIN, GLOBAL in which a selected
/// tensor has steps (chosen at the first evaluated step). The rule works in
/// that mode's step numbers; global steps of another mode evaluate to False.
/// Per tensor, a check happens at mode step s where the tensor was saved when
/// no check happened yet or s >= last check + num_steps, and some saved step
/// b <= s - num_steps exists (the largest is taken); the check then sets the
/// last check to s and is met when loss(s) >= loss(b) - |loss(b)| * diff_percent / 100
/// (diff_percent 0: the loss is not strictly lower). Values of the first worker
/// that wrote the step. Keeps state between steps: evaluated sequentially.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// LossNotDecreasing over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_loss_not_decreasing : public rule<basic_loss_not_decreasing<Storage>, Storage> {
    using base = rule<basic_loss_not_decreasing<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "LossNotDecreasing";

    /// The rule over `trial`, configured by `params`.
    explicit basic_loss_not_decreasing(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), selection_(detail::selection_from<Storage>(params, false)),
          use_losses_collection_(params.get("use_losses_collection", true)),
          num_steps_(params.get<std::int64_t>("num_steps", 10)), diff_percent_(params.get("diff_percent", 0.0)),
          mode_(params.get_optional<mode>("mode")) {
        if (num_steps_ < 1) {
            throw config_error("rule LossNotDecreasing: parameter 'num_steps' must be at least 1, got " +
                               std::to_string(num_steps_));
        }
        if (selection_.unspecified() && !use_losses_collection_) {
            throw config_error("rule LossNotDecreasing: give collection_names or tensor_regex, or use_losses_collection");
        }
    }

    /// True when some loss was checked at `step` and had not decreased enough.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) {
        const std::vector<std::string> names = losses();
        if (!mode_) {
            mode_ = pick_mode(names);
            if (!mode_) {
                return false; // no selected tensor has steps yet
            }
        }
        const mode m = *mode_;
        std::int64_t s = step;
        if (m != mode::global) {
            if (this->base_trial().mode_of(step) != m) {
                return false;
            }
            s = this->base_trial().mode_step(step).value_or(step);
        }
        bool met = false;
        for (const std::string& name : names) {
            met = check(name, s, m) || met;
        }
        return met;
    }

private:
    [[nodiscard]] std::vector<std::string> losses() const {
        std::vector<std::string> names = selection_.names(this->base_trial());
        if (use_losses_collection_ && this->base_trial().collections().count("losses") != 0) {
            for (auto& n : losses_.names(this->base_trial())) {
                names.push_back(std::move(n));
            }
            std::sort(names.begin(), names.end());
            names.erase(std::unique(names.begin(), names.end()), names.end());
        }
        return names;
    }

    [[nodiscard]] std::optional<mode> pick_mode(const std::vector<std::string>& names) const {
        for (mode m : {mode::eval, mode::train, mode::global}) {
            for (const std::string& name : names) {
                if (!this->tensor(name).steps(m).empty()) {
                    return m;
                }
            }
        }
        return std::nullopt;
    }

    // One tensor at mode step s: true when a check happened and was met.
    bool check(const std::string& name, std::int64_t s, mode m) {
        auto t = this->tensor(name);
        const std::vector<std::int64_t> steps = t.steps(m);
        if (!std::binary_search(steps.begin(), steps.end(), s)) {
            return false;
        }
        auto last = last_check_.find(name);
        if (last != last_check_.end() && s < last->second + num_steps_) {
            return false;
        }
        auto after = std::upper_bound(steps.begin(), steps.end(), s - num_steps_);
        if (after == steps.begin()) {
            return false;
        }
        const std::int64_t b = *(after - 1);
        const tensor_value now = this->value(name, s, m);
        const tensor_value before = this->value(name, b, m);
        if (now.size() != 1 || before.size() != 1 || !is_real_valued(now.type()) || !is_real_valued(before.type())) {
            return false; // not a scalar loss
        }
        last_check_[name] = s;
        const double loss_s = scalar_of(now);
        const double loss_b = scalar_of(before);
        if (loss_s >= loss_b - std::fabs(loss_b) * diff_percent_ / 100.0) {
            this->set_reason(name + " went from " + std::to_string(loss_b) + " at mode step " + std::to_string(b) + " to " +
                             std::to_string(loss_s) + " at mode step " + std::to_string(s));
            return true;
        }
        return false;
    }

    detail::tensor_selection<Storage> selection_;
    detail::tensor_selection<Storage> losses_{{"losses"}, {}, false};
    bool use_losses_collection_;
    std::int64_t num_steps_;
    double diff_percent_;
    std::optional<mode> mode_;
    std::map<std::string, std::int64_t> last_check_;
};

/// LossNotDecreasing over local runs.
using loss_not_decreasing = basic_loss_not_decreasing<>;

} // namespace tdbg::rules
