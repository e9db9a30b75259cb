#pragma once
/// \file
/// StalledTrainingRule: met at a step when more than `threshold` seconds
/// passed between it and the previous step: training stalled in between.
///
/// Parameters (AWS's published defaults): `threshold` (int seconds, 1800),
/// `stop_training_on_fire` (bool, False), `training_job_name_prefix` (string,
/// None). Interpretation: a step's time is the wall time of its event file
/// (the time stamp of the file's first record, written when the hook started
/// the step), read through the run's storage, so the rule judges a finished
/// run as it would have judged it live. A step without an event file (only
/// shapes were saved) evaluates to False and does not move the clock. With
/// stop_training_on_fire the stop-training action is added (the stop marker
/// is written; training_job_name_prefix, which names a SageMaker job, is not
/// needed). Keeps state: evaluated sequentially. Limit: the rule judges the steps
/// that arrive, so a job that hangs for good is reported only if it ever writes
/// another step (SageMaker's rule container also watches the clock; tdbg's
/// invoke_rule waits for the next step, with invoke_options::step_timeout as
/// the way to stop waiting).

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tdbg/core/error.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// StalledTrainingRule over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_stalled_training_rule : public rule<basic_stalled_training_rule<Storage>, Storage> {
    using base = rule<basic_stalled_training_rule<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "StalledTrainingRule";

    /// The rule over `trial`, configured by `params`.
    explicit basic_stalled_training_rule(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), threshold_(params.get<std::int64_t>("threshold", 1800)) {
        const bool stop = params.get("stop_training_on_fire", false);
        (void)params.get_optional<std::string>("training_job_name_prefix");
        if (threshold_ < 0) {
            throw config_error("rule StalledTrainingRule: parameter 'threshold' must be >= 0, got " + std::to_string(threshold_));
        }
        if (stop) {
            this->actions().add(stop_training_action(this->base_trial().storage()));
        }
    }

    /// True when `step` came more than `threshold` seconds after the previous one.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) {
        const auto time = step_time(step);
        if (!time) {
            return false;
        }
        const std::optional<double> previous = last_time_;
        last_time_ = time;
        if (previous && *time - *previous > static_cast<double>(threshold_)) {
            this->set_reason("no step for " + std::to_string(*time - *previous) + " s before step " + std::to_string(step));
            return true;
        }
        return false;
    }

private:
    // The wall time of the first record of the step's event file (first worker that has one).
    [[nodiscard]] std::optional<double> step_time(std::int64_t step) const {
        const Storage& storage = this->base_trial().storage();
        for (const std::string& worker : this->base_trial().workers()) {
            const std::string key = format::event_file_key(step, worker);
            if (!storage.exists(key)) {
                continue;
            }
            const std::string header = storage.read_range(key, 0, format::record_header_size);
            std::uint64_t length = 0;
            std::memcpy(&length, header.data(), sizeof length); // little-endian, as TFRecord writes it
            if (length > (std::uint64_t{1} << 30U)) {
                throw format_error("record length " + std::to_string(length) + " is not plausible", key, 0);
            }
            const std::string record = storage.read_range(key, 0, format::record_overhead + length);
            const std::string_view payload = format::record_payload(record, key, 0);
            return format::decode_event(payload, key, format::record_header_size).wall_time;
        }
        return std::nullopt;
    }

    std::int64_t threshold_;
    std::optional<double> last_time_;
};

/// StalledTrainingRule over local runs.
using stalled_training_rule = basic_stalled_training_rule<>;

} // namespace tdbg::rules
