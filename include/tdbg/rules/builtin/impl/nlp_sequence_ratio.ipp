#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/nlp_sequence_ratio.hpp.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/nlp_sequence_ratio.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL nlp_sequence_ratio::nlp_sequence_ratio(trial base, const rule_params& params)
    : any_tensor_rule(std::move(base), params,
                      detail::tensor_selection(
                          {}, params.get<std::vector<std::string>>("tensor_regex", {".*embedding0_input_0"}), false)),
      tokens_(params.get<std::vector<double>>("token_values", {0.0})),
      thresholds_(params.get<std::vector<double>>("token_thresholds_percent", {50.0}, non_negative)) {
    if (tokens_.empty()) {
        throw config_error("rule NLPSequenceRatio: parameter 'token_values' lists no token");
    }
    if (thresholds_.size() == 1) {
        thresholds_.resize(tokens_.size(), thresholds_.front());
    }
    if (thresholds_.size() != tokens_.size()) {
        throw config_error(fmt::format(
            "rule NLPSequenceRatio: {} token_values but {} token_thresholds_percent (give one, or one per token)",
            tokens_.size(), thresholds_.size()));
    }
}

TDBG_DECL std::optional<verdict> nlp_sequence_ratio::check_tensor(const step_inputs& inputs,
                                                                  detail::input_range tensor_inputs,
                                                                  std::int64_t /*step*/) const {
    const step_inputs::input& in = inputs[tensor_inputs.first];
    const tensor_value* v = detail::real_value_of(inputs, in);
    if (v == nullptr) {
        return std::nullopt;
    }
    std::vector<std::size_t> counts(tokens_.size(), 0);
    for_each_real(*v, [&](double x) {
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            counts[i] += x == tokens_[i] ? 1 : 0;
        }
    });
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
        const double percent = 100.0 * static_cast<double>(counts[i]) / static_cast<double>(v->size());
        if (percent > thresholds_[i]) {
            return condition_met(fmt::format("token {:.6g} is {:.6g}% of {}", tokens_[i], percent, in.request.name));
        }
    }
    return verdict(false);
}

TDBG_DECL rule_description nlp_sequence_ratio::describe() {
    return {"A token (padding, unknown word) makes up too much of the input sequences.",
            "Met at a step when the percentage of the elements of an input sequence tensor that equal "
            "token_values[i] exceeds token_thresholds_percent[i]: sequences made mostly of padding, or of "
            "unknown-word tokens.\n\nThe input sequences are the tensors matching tensor_regex. One threshold "
            "applies to every token; otherwise give one per token.",
            {{"tensor_regex", ".*embedding0_input_0", "regular expressions of the names of input sequences"},
             {"token_values", "0", "the token ids to count (comma-separated)"},
             {"token_thresholds_percent", "50",
              "the percentage above which a token is too frequent (one, or one per token)"}},
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, nlp_sequence_ratio)
#endif
