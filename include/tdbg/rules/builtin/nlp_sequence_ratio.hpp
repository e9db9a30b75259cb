#pragma once
/// \file
/// NLPSequenceRatio: met at a step when some token makes up too much of the
/// input sequences: the percentage of elements equal to `token_values[i]`
/// exceeds `token_thresholds_percent[i]` (padding or unknown-word tokens).
///
/// Parameters (AWS's published defaults): `tensor_regex` (list,
/// ".*embedding0_input_0"), `token_values` (list of numbers, "0"),
/// `token_thresholds_percent` (list of floats, "50"; one threshold applies
/// to every token, else one per token). AWS prints the thresholds' default
/// as "50,50" next to the single default token; tdbg's default is one 50.
/// Tensors without a value are not evaluated; a step with none is skipped
/// (TensorUnavailableForStep). Parallel steps.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// NLPSequenceRatio over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_nlp_sequence_ratio : public rule<basic_nlp_sequence_ratio<Storage>, Storage> {
    using base = rule<basic_nlp_sequence_ratio<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "NLPSequenceRatio";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_nlp_sequence_ratio(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params),
          selection_({}, params.get<std::vector<std::string>>("tensor_regex", {".*embedding0_input_0"}), false),
          tokens_(params.get<std::vector<double>>("token_values", {0.0})),
          thresholds_(params.get<std::vector<double>>("token_thresholds_percent", {50.0})) {
        if (tokens_.empty()) {
            throw config_error("rule NLPSequenceRatio: parameter 'token_values' lists no token");
        }
        if (thresholds_.size() == 1) {
            thresholds_.resize(tokens_.size(), thresholds_.front());
        }
        if (thresholds_.size() != tokens_.size()) {
            throw config_error("rule NLPSequenceRatio: " + std::to_string(tokens_.size()) + " token_values but " +
                               std::to_string(thresholds_.size()) + " token_thresholds_percent (give one, or one per token)");
        }
    }

    /// True when a token's share of some sequence tensor at `step` is above its threshold.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return detail::any_tensor(selection_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) -> std::optional<bool> {
                                      const tensor_value v = this->value(name, step);
                                      if (!is_real_valued(v.type()) || v.size() == 0) {
                                          return std::nullopt;
                                      }
                                      std::vector<std::size_t> counts(tokens_.size(), 0);
                                      for_each_real(v, [&](double x) {
                                          for (std::size_t i = 0; i < tokens_.size(); ++i) {
                                              counts[i] += x == tokens_[i] ? 1 : 0;
                                          }
                                      });
                                      for (std::size_t i = 0; i < tokens_.size(); ++i) {
                                          const double percent =
                                              100.0 * static_cast<double>(counts[i]) / static_cast<double>(v.size());
                                          if (percent > thresholds_[i]) {
                                              this->set_reason("token " + std::to_string(tokens_[i]) + " is " +
                                                               std::to_string(percent) + "% of " + name);
                                              return true;
                                          }
                                      }
                                      return false;
                                  });
    }

private:
    detail::tensor_selection<Storage> selection_;
    std::vector<double> tokens_;
    std::vector<double> thresholds_;
};

/// NLPSequenceRatio over local runs.
using nlp_sequence_ratio = basic_nlp_sequence_ratio<>;

} // namespace tdbg::rules
