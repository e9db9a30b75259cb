#pragma once
/// \file
/// smdebug's state store (core/state_store.py), which lets a job resumed from a
/// checkpoint go on with its step numbers. A checkpoint configuration file (JSON,
/// "LocalPath": the checkpoint directory) names where the trainer saves its
/// checkpoints; the store keeps a list of states in metadata.json there, and the
/// hook appends one at the start of a step whenever the checkpoint files changed.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::detail {

/// The variable naming the checkpoint configuration file, and smdebug's default for it.
inline constexpr const char* checkpoint_config_env = "CHECKPOINT_CONFIG_FILE_PATH";
inline constexpr const char* default_checkpoint_config_file = "/opt/ml/input/config/checkpointconfig.json";

/// One state of the store: what a resumed job starts from.
struct training_state {
    std::int64_t training_run = 0;
    /// The last global step that saved a tensor (null in the file when none did).
    std::optional<std::int64_t> last_saved_step;
    /// The last global step that ran.
    std::int64_t last_seen_step = -1;
    /// Each mode's step, in the order the hook first met the modes (GLOBAL first).
    std::vector<std::pair<mode, std::int64_t>> mode_steps;
};

/// The store of one hook: reads the states at construction, tells when the
/// checkpoint files changed, and rewrites metadata.json with one more state.
class state_store {
public:
    /// The store the checkpoint configuration `config_file` points to; an empty
    /// store when the file does not exist or has no "LocalPath" (as smdebug's).
    /// Throws config_error for a configuration or metadata.json that cannot be
    /// read or is malformed (smdebug raises then too).
    explicit state_store(const std::filesystem::path& config_file) {
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

    /// True when a checkpoint directory is configured.
    [[nodiscard]] bool enabled() const noexcept { return checkpoint_dir_.has_value(); }
    /// metadata.json in the checkpoint directory (empty when none is configured).
    [[nodiscard]] const std::filesystem::path& states_file() const noexcept { return states_file_; }

    /// The state with the highest last seen step, if any was saved.
    [[nodiscard]] std::optional<training_state> last_state() const {
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
        return s;
    }

    /// smdebug's is_checkpoint_updated: true when the files of the checkpoint
    /// directory (but metadata.json and SageMaker's upload markers) changed in
    /// number, size or name since the last call. The sizes remembered follow
    /// smdebug's bookkeeping, which appends rather than replaces when the files
    /// changed in number or name, so that the same steps write a state as in smdebug.
    bool checkpoint_updated() {
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

    /// Appends `state` and rewrites metadata.json with every state, as json.dump
    /// writes the list. Throws storage_error naming the file when it cannot be written.
    void update(const training_state& state) {
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
        std::ofstream out(states_file_, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        if (!out) {
            throw storage_error(fmt::format("cannot write the training state file {}", states_file_.string()));
        }
    }

private:
    static format::json_value parse_file(const std::filesystem::path& file, std::string_view what) {
        std::ifstream in(file, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in) {
            throw config_error(fmt::format("cannot read the {} {}", what, file.string()));
        }
        try {
            return format::parse_json(text.str(), file.string(), what);
        } catch (const format_error& e) {
            throw config_error(e.what());
        }
    }

    // smdebug's _read_states_file: the four keys of each state, sorted (stably) by last seen step.
    void read_states() {
        const format::json_value all = parse_file(states_file_, "training state file");
        const auto fail = [&](std::size_t i, std::string_view what) {
            return config_error(fmt::format("training state file {}: state {} {}", states_file_.string(), i, what));
        };
        if (!all.is_array()) {
            throw config_error(fmt::format("training state file {}: expected a list of states, found {}",
                                           states_file_.string(), all.type_name()));
        }
        std::vector<std::pair<std::int64_t, format::json_value>> read;
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
                throw fail(i, fmt::format("has a \"latest-global-step-seen\" that is {}, not an integer",
                                          seen.type_name()));
            }
            read.emplace_back(seen.as_int64(), std::move(state));
        }
        std::stable_sort(read.begin(), read.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& [seen, state] : read) {
            states_.push_back(std::move(state));
        }
    }

    // The checkpoint directory's files, recursively, sorted by path (smdebug's _get_checkpoint_files_in_dir).
    [[nodiscard]] std::vector<std::string> checkpoint_files() const {
        std::vector<std::string> files;
        std::error_code ec;
        std::filesystem::recursive_directory_iterator it(*checkpoint_dir_, ec);
        for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
            if (it->is_directory(ec)) {
                continue;
            }
            const std::string name = it->path().filename().string();
            if (name != "metadata.json" && name.find("sagemaker-uploaded") == std::string::npos) {
                files.push_back(it->path().string());
            }
        }
        std::sort(files.begin(), files.end());
        return files;
    }

    static std::uintmax_t size_of(const std::string& file) {
        std::error_code ec;
        const std::uintmax_t size = std::filesystem::file_size(file, ec);
        return ec ? 0 : size;
    }

    std::optional<std::filesystem::path> checkpoint_dir_;
    std::filesystem::path states_file_;
    std::vector<format::json_value> states_;
    std::vector<std::string> last_files_;
    std::vector<std::uintmax_t> last_sizes_;
};

} // namespace tdbg::detail
