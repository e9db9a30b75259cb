#pragma once
// Small runs for the diff tests, written with tests/trial/run_writer.hpp: a
// 2x3 weight, a bias, a loss and a reductions-only gradient per step, with
// knobs for the differences the tests look for.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "trial/run_writer.hpp"

namespace tdbg::test {

/// What to write: the same run unless a knob says otherwise.
struct diff_run_spec {
    std::int64_t steps = 10;
    /// A name prefix instead of "MLP_", and another name for the loss.
    std::string prefix = "MLP_";
    std::string loss_name = "CrossEntropyLoss_output_0";
    /// From this step on, element `element` of MLP_fc1.weight is `delta` larger.
    std::optional<std::int64_t> perturb_from;
    std::size_t element = 5;
    float delta = 0.5F;
    /// From this step on, the stored mean of gradient/MLP_fc1.weight is 1 larger.
    std::optional<std::int64_t> perturb_mean_from;
    /// The weight also saved raw (its reductions computed by the reader).
    bool gradient_raw = false;
    /// Another tensor only this run has.
    bool extra_tensor = false;
    /// The loss saved as float64.
    bool loss_as_double = false;
    /// A NaN in the bias at this step.
    std::optional<std::int64_t> nan_at;
    /// Two workers; `drop_worker_at` leaves worker_1 out at that step.
    bool two_workers = false;
    std::optional<std::int64_t> drop_worker_at;
};

/// Element i of the weight at step s: 0.1 s + 0.01 i + 0.25.
inline float weight_at(std::int64_t step, std::size_t i) {
    return 0.1F * static_cast<float>(step) + 0.01F * static_cast<float>(i) + 0.25F;
}

inline void write_diff_run(const std::filesystem::path& dir, const diff_run_spec& spec) {
    run_writer w(dir);
    std::vector<std::string> workers{"worker_0"};
    if (spec.two_workers) {
        workers.emplace_back("worker_1");
    }
    for (const auto& worker : workers) {
        w.collections(worker, static_cast<int>(workers.size()));
    }
    for (std::int64_t s = 0; s < spec.steps; ++s) {
        for (const auto& worker : workers) {
            if (spec.drop_worker_at && *spec.drop_worker_at == s && worker == "worker_1") {
                continue;
            }
            std::vector<float> weight(6);
            for (std::size_t i = 0; i < weight.size(); ++i) {
                weight[i] = weight_at(s, i);
            }
            if (spec.perturb_from && s >= *spec.perturb_from) {
                weight[spec.element] += spec.delta;
            }
            std::vector<float> bias{0.5F, -1.0F, 2.0F};
            if (spec.nan_at && *spec.nan_at == s) {
                bias[1] = std::numeric_limits<float>::quiet_NaN();
            }
            const float loss = 2.0F / static_cast<float>(s + 1);
            const float base_mean = 0.01F * static_cast<float>(s);
            float mean = base_mean;
            if (spec.perturb_mean_from && s >= *spec.perturb_mean_from) {
                mean += 1.0F;
            }
            std::vector<saved_tensor> tensors;
            tensors.push_back({spec.prefix + "fc1.weight", tensor_value(weight, {2, 3}), {}, std::nullopt});
            tensors.push_back({spec.prefix + "fc2.bias", tensor_value(bias), {}, std::nullopt});
            tensors.push_back(
                {spec.loss_name,
                 spec.loss_as_double ? tensor_value::scalar(static_cast<double>(loss)) : tensor_value::scalar(loss),
                 {},
                 std::nullopt});
            saved_tensor gradient{"gradient/" + spec.prefix + "fc1.weight", std::nullopt, {}, std::nullopt};
            if (spec.gradient_raw) {
                gradient.value = tensor_value(std::vector<float>{mean, mean, mean});
            } else {
                gradient.reductions = {{reduction{reduction_kind::mean, false}, tensor_value::scalar(mean)},
                                       {reduction{reduction_kind::max, false}, tensor_value::scalar(base_mean + 1.0F)}};
            }
            tensors.push_back(std::move(gradient));
            if (spec.extra_tensor) {
                tensors.push_back({"extra", tensor_value::scalar(1.0F), {}, std::nullopt});
            }
            w.step(s, worker, mode::train, s, tensors);
        }
    }
    w.end();
}

} // namespace tdbg::test
