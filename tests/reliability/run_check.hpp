#pragma once
// Checks a run written by the reliability trainer against the values it must
// hold, from the files on disk and through a trial.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tdbg/format/layout.hpp"
#include "tdbg/trial/trial.hpp"
#include "training_values.hpp"

namespace tdbg::test::reliability {

/// The event files below `run`, as keys ("events/<step>/<step>_<worker>.tfevents").
inline std::set<std::string> event_files(const std::filesystem::path& run) {
    std::set<std::string> out;
    if (std::filesystem::exists(run / "events")) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(run / "events")) {
            if (entry.is_regular_file()) {
                out.insert(std::filesystem::relative(entry.path(), run).generic_string());
            }
        }
    }
    return out;
}

/// The steps whose index file is published (found by walking the directory, not through a trial).
inline std::set<std::int64_t> published_steps(const std::filesystem::path& run) {
    std::set<std::int64_t> out;
    const auto index = run / "index";
    std::error_code ec;
    if (!std::filesystem::is_directory(index, ec)) {
        return out;
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(index)) {
        if (!entry.is_regular_file()) {
            continue;
        }
        const std::string key = entry.path().lexically_relative(run).generic_string();
        if (const auto info = format::parse_index_file_key(key)) {
            out.insert(info->step);
        }
    }
    return out;
}

/// True when `a` and `b` hold the same float32 elements, bit for bit.
inline bool same_floats(const tensor_value& value, const std::vector<float>& expected) {
    if (value.type() != dtype::float32 || value.size() != expected.size()) {
        return false;
    }
    const float* data = value.data_as<float>();
    return std::equal(expected.begin(), expected.end(), data);
}

/// Checks every published step of the run at `run` through a trial: the trial
/// sees exactly the published steps, each with every tensor and exactly its
/// values (so no step is partly visible). Returns the number of steps checked.
inline std::size_t check_published_run(const std::filesystem::path& run) {
    const std::set<std::int64_t> published = published_steps(run);
    trial_options options;
    options.threads = 1;
    const auto t = create_trial(run.string(), std::nullopt, {}, options);
    const std::vector<std::int64_t> expected_steps(published.begin(), published.end());
    CHECK(t.steps() == expected_steps);
    CHECK(t.steps(mode::global, true) == expected_steps);
    CHECK(t.steps(mode::train) == expected_steps);
    const std::vector<std::string> names = tensor_names();
    for (const std::int64_t step : published) {
        INFO("run " << run.string() << ", step " << step);
        auto listed = t.tensor_names(step);
        std::sort(listed.begin(), listed.end());
        CHECK(listed == names);
        for (int k = 0; k <= small_tensors; ++k) {
            INFO("tensor " << tensor_name(k));
            const tensor_value v = t.tensor(tensor_name(k)).value(step);
            CHECK(same_floats(v, values(step, k)));
        }
        const tensor_value id = t.tensor("step_id").value(step);
        REQUIRE(id.type() == dtype::int64);
        REQUIRE(id.size() == 1);
        CHECK(id.data_as<std::int64_t>()[0] == step);
    }
    return published.size();
}

} // namespace tdbg::test::reliability
