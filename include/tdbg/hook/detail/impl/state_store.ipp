#pragma once
/// \file
/// Definitions of tdbg/hook/detail/state_store.hpp.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/config_file.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/detail/state_store.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::detail {

TDBG_DECL state_store::state_store(const std::filesystem::path& config_file) {
    std::error_code ec;
    if (config_file.empty() || !std::filesystem::exists(config_file, ec)) {
        return;
    }
    const format::json_value config = parse_file(config_file, "checkpoint configuration");
    const format::json_value* local = config.find("LocalPath");
    if (local == nullptr) {
        return;
    }
    if (!local->is_string()) {
        throw config_error(fmt::format("checkpoint configuration {}: \"LocalPath\" must be a string, found {}",
                                       config_file.string(), local->type_name()));
    }
    checkpoint_dir_ = local->as_string();
    states_file_ = *checkpoint_dir_ / "metadata.json";
    if (std::filesystem::exists(states_file_, ec)) {
        read_states();
    }
    last_files_ = checkpoint_files();
    for (const auto& file : last_files_) {
        last_sizes_.push_back(size_of(file));
    }
}

TDBG_DECL std::optional<training_state> state_store::last_state() const {
    if (states_.empty()) {
        return std::nullopt;
    }
    const format::json_value& last = states_.back();
    const auto fail = [&](std::string_view what) {
        return config_error(fmt::format("the last state in {} is malformed: {}", states_file_.string(), what));
    };
    training_state s;
    try {
        s.training_run = last.at("training-run").as_int64();
        const format::json_value& saved = last.at("latest-global-step-saved");
        if (!saved.is_null()) {
            s.last_saved_step = saved.as_int64();
        }
        s.last_seen_step = last.at("latest-global-step-seen").as_int64();
        const format::json_value& modes = last.at("latest-mode-step");
        if (!modes.is_object()) {
            throw fail("\"latest-mode-step\" is not an object");
        }
        for (const auto& member : modes.members()) {
            const auto m = try_parse_mode(member.key);
            if (!m || mode_name(*m) != member.key) {
                throw fail(fmt::format(R"(unknown mode "{}" in "latest-mode-step")", member.key));
            }
            s.mode_steps.emplace_back(*m, member.value.as_int64());
        }
    } catch (const format_error& e) {
        throw fail(e.what());
    }
    // A resumed job goes on after these steps: each must leave it a step the run's files can name.
    const auto check_step = [&](std::string_view field, std::int64_t step) {
        if (step < -1 || step >= format::max_step) {
            throw fail(fmt::format("\"{}\" is {}, outside -1 to {}: a job resumed after it could not name its steps "
                                   "(the run's files name steps with 12 digits)",
                                   field, step, format::max_step - 1));
        }
    };
    if (s.training_run < 0 || s.training_run >= std::numeric_limits<std::int64_t>::max()) {
        throw fail(fmt::format("\"training-run\" is {}, not a count of training jobs", s.training_run));
    }
    if (s.last_saved_step) {
        check_step("latest-global-step-saved", *s.last_saved_step);
    }
    check_step("latest-global-step-seen", s.last_seen_step);
    for (const auto& [m, step] : s.mode_steps) {
        check_step(fmt::format("latest-mode-step\" \"{}", mode_name(m)), step);
    }
    return s;
}

TDBG_DECL bool state_store::checkpoint_updated() {
    if (!enabled()) {
        return false;
    }
    std::vector<std::string> files = checkpoint_files();
    if (files.empty()) {
        return false;
    }
    const auto append_sizes = [&] {
        for (const auto& file : files) {
            last_sizes_.push_back(size_of(file));
        }
    };
    if (files.size() != last_files_.size()) {
        append_sizes();
        last_files_ = std::move(files);
        return true;
    }
    std::vector<std::uintmax_t> sizes;
    sizes.reserve(files.size());
    for (const auto& file : files) {
        sizes.push_back(size_of(file));
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] != last_sizes_[i]) {
            last_sizes_ = std::move(sizes);
            last_files_ = std::move(files);
            return true;
        }
    }
    if (files != last_files_) {
        append_sizes();
        last_files_ = std::move(files);
        return true;
    }
    return false;
}

TDBG_DECL void state_store::update(const training_state& state) {
    format::json_value modes = format::json_value::object();
    for (const auto& [m, step] : state.mode_steps) {
        modes[mode_name(m)] = step;
    }
    format::json_value record = format::json_value::object();
    record["training-run"] = state.training_run;
    record["latest-global-step-saved"] =
        state.last_saved_step ? format::json_value(*state.last_saved_step) : format::json_value();
    record["latest-global-step-seen"] = state.last_seen_step;
    record["latest-mode-step"] = std::move(modes);
    states_.push_back(std::move(record));
    format::json_value all = format::json_value::array();
    for (const auto& s : states_) {
        all.push_back(s);
    }
    const std::string text = format::dump_json(all);
    // Written as the run's files are (local_storage: a new temporary file renamed over the old
    // one, in a checkpoint directory checked to be no one else's), never truncated and written
    // in place: a link another user placed at metadata.json is replaced, not written through
    // (docs/reliability.md, "A shared machine").
    try {
        local_storage(*checkpoint_dir_).put(states_file_.filename().string(), text);
    } catch (const storage_error& e) {
        throw storage_error(fmt::format("cannot write the training state file {}: {}", states_file_.string(), e.what()));
    }
}

TDBG_DECL format::json_value state_store::parse_file(const std::filesystem::path& file, std::string_view what) {
    const std::string text = read_config_file(file, what);
    try {
        return format::parse_json(text, file.string(), what);
    } catch (const format_error& e) {
        throw config_error(e.what());
    }
}

TDBG_DECL void state_store::read_states() {
    const format::json_value all = parse_file(states_file_, "training state file");
    const auto fail = [&](std::size_t i, std::string_view what) {
        return config_error(fmt::format("training state file {}: state {} {}", states_file_.string(), i, what));
    };
    if (!all.is_array()) {
        throw config_error(fmt::format("training state file {}: expected a list of states, found {}",
                                       states_file_.string(), all.type_name()));
    }
    // Sorted as read, each state inserted after those with the same step (stable): a run has a
    // state per training job, a handful, and a sort of (step, state) pairs compiled 13 KB of code
    // into every file that includes the hook.
    std::vector<std::int64_t> steps;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const format::json_value& item = all.at(i);
        if (!item.is_object()) {
            throw fail(i, fmt::format("is {}, not an object", item.type_name()));
        }
        format::json_value state = format::json_value::object();
        for (const char* key :
             {"training-run", "latest-global-step-saved", "latest-global-step-seen", "latest-mode-step"}) {
            const format::json_value* value = item.find(key);
            if (value == nullptr) {
                throw fail(i, fmt::format("has no \"{}\"", key));
            }
            state[key] = *value;
        }
        const format::json_value& seen = state.at("latest-global-step-seen");
        if (!seen.is_integer()) {
            throw fail(i,
                       fmt::format("has a \"latest-global-step-seen\" that is {}, not an integer", seen.type_name()));
        }
        const std::int64_t step = seen.as_int64();
        const auto at = std::upper_bound(steps.begin(), steps.end(), step) - steps.begin();
        steps.insert(steps.begin() + at, step);
        states_.insert(states_.begin() + at, std::move(state));
    }
}

TDBG_DECL std::vector<std::string> state_store::checkpoint_files() const {
    std::vector<std::string> files;
    std::error_code ec;
    std::filesystem::recursive_directory_iterator it(*checkpoint_dir_, ec);
    for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec)) {
            continue;
        }
        const std::string name = it->path().filename().string();
        // Not the state file, nor one being written (metadata.json.<pid>.<random>.tmp).
        const bool state_file = name == "metadata.json" ||
                                (name.rfind("metadata.json.", 0) == 0 && name.size() > 4 &&
                                 name.compare(name.size() - 4, 4, ".tmp") == 0);
        if (!state_file && name.find("sagemaker-uploaded") == std::string::npos) {
            files.push_back(it->path().string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

TDBG_DECL bool state_keeper::open(const hook_options& options, step_clock& clock) {
    std::string config;
    if (options.checkpoint_config_file) {
        config = *options.checkpoint_config_file;
    } else if (const char* env = std::getenv(checkpoint_config_env); env != nullptr) {
        config = env;
    } else {
        config = default_checkpoint_config_file;
    }
    store_ = std::make_unique<state_store>(config);
    if (auto last = store_->last_state()) {
        last_saved_step_ = last->last_saved_step;
        training_run_ = last->training_run + 1;
        clock.resume(last->last_seen_step, last->mode_steps);
        return true;
    }
    return false;
}

TDBG_DECL bool state_keeper::due() { return store_ && store_->checkpoint_updated(); }

TDBG_DECL void state_keeper::write(const step_clock& clock) {
    training_state state;
    state.training_run = training_run_;
    state.last_saved_step = last_saved_step_;
    state.last_seen_step = clock.global();
    state.mode_steps = clock.known_mode_steps();
    store_->update(state);
}

} // namespace tdbg::detail
