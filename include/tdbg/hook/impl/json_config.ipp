#pragma once
/// \file
/// Definitions of tdbg/hook/json_config.hpp.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/core/config_file.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/save_config.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/json_config.hpp"
#include "tdbg/hook/reduction_config.hpp"

namespace tdbg {

namespace detail {

/// One mode's save keys as given (unset ones fall back, key by key).
struct partial_save_mode {
    std::optional<std::uint64_t> save_interval;
    std::optional<std::vector<std::uint64_t>> save_steps;
    std::optional<std::uint64_t> start_step;
    std::optional<std::optional<std::uint64_t>> end_step;

    /// `over`'s keys win.
    [[nodiscard]] partial_save_mode merged_with(const partial_save_mode& over) const {
        partial_save_mode out = *this;
        if (over.save_interval) {
            out.save_interval = over.save_interval;
        }
        if (over.save_steps) {
            out.save_steps = over.save_steps;
        }
        if (over.start_step) {
            out.start_step = over.start_step;
        }
        if (over.end_step) {
            out.end_step = over.end_step;
        }
        return out;
    }
    [[nodiscard]] save_config_mode resolve() const {
        save_config_mode m;
        m.save_interval = save_interval.value_or(default_save_interval);
        m.save_steps = save_steps.value_or(std::vector<std::uint64_t>{});
        m.start_step = start_step.value_or(0);
        m.end_step = end_step.value_or(std::nullopt);
        return m;
    }
};

using partial_save_config = std::array<partial_save_mode, 4>;

class hook_config_parser {
public:
    explicit hook_config_parser(std::string source) : source_(std::move(source)) {}

    hook_options parse(std::string_view text) {
        format::json_value root;
        try {
            root = format::parse_json(text, source_, "the hook configuration");
        } catch (const format_error& e) {
            throw config_error(e.what());
        }
        if (!root.is_object()) {
            throw config_error(fmt::format("{}: expected a JSON object at the top, found {}", source_, root.type_name()));
        }
        check_keys(root, "", {"LocalPath", "S3OutputPath", "S3Path", "HookParameters", "CollectionConfigurations"},
                   false);

        hook_options options;
        options.out_dir = default_sagemaker_out_dir;
        if (const auto* it = root.find("LocalPath"); it != nullptr && !it->is_null()) {
            options.out_dir = string_value(*it, "LocalPath");
        }
        for (const char* key : {"S3OutputPath", "S3Path"}) {
            if (const auto* it = root.find(key); it != nullptr && !it->is_null()) {
                options.s3_output_path = string_value(*it, key);
            }
        }

        format::json_value hook_params = format::json_value::object();
        if (const auto* it = root.find("HookParameters"); it != nullptr && !it->is_null()) {
            if (!it->is_object()) {
                throw config_error(
                    fmt::format("{}: HookParameters: expected an object, found {}", source_, it->type_name()));
            }
            hook_params = *it;
        }
        check_keys(hook_params, "HookParameters.",
                   {"reductions", "save_raw_tensor", "save_shape", "save_all", "include_regex", "exclude_regex",
                    "include_workers", "export_tensorboard", "tensorboard_dir"},
                   true);
        const partial_save_config hook_modes = save_modes(hook_params, "HookParameters.");
        for (mode m : all_modes) {
            options.save_config.set(m, hook_modes[index(m)].resolve());
        }
        options.reduction_config = reductions(hook_params, "HookParameters.");
        if (const auto* it = hook_params.find("save_all"); it != nullptr) {
            options.save_all = bool_value(*it, "HookParameters.save_all");
        }
        if (const auto* it = hook_params.find("include_regex"); it != nullptr) {
            options.include_regex = regex_list(*it, "HookParameters.include_regex", "default");
        }
        if (const auto* it = hook_params.find("exclude_regex"); it != nullptr) {
            collection defaults{std::string(collection_names::default_collection)};
            defaults.exclude(regex_list(*it, "HookParameters.exclude_regex", "default"));
            options.collections.push_back(std::move(defaults));
        }
        if (const auto* it = hook_params.find("include_workers"); it != nullptr) {
            const std::string value = string_value(*it, "HookParameters.include_workers");
            if (value == "one") {
                options.include_workers = workers_to_save::one;
            } else if (value == "all") {
                options.include_workers = workers_to_save::all;
            } else {
                throw config_error(fmt::format(R"({}: HookParameters.include_workers: expected "one" or "all", found "{}")",
                                               source_, value));
            }
        }
        if (const auto* it = hook_params.find("export_tensorboard"); it != nullptr) {
            options.export_tensorboard = bool_value(*it, "HookParameters.export_tensorboard");
        }
        if (const auto* it = hook_params.find("tensorboard_dir"); it != nullptr && !it->is_null()) {
            options.tensorboard_dir = string_value(*it, "HookParameters.tensorboard_dir");
        }

        if (const auto* it = root.find("CollectionConfigurations"); it != nullptr && !it->is_null()) {
            if (!it->is_array()) {
                throw config_error(
                    fmt::format("{}: CollectionConfigurations: expected a list, found {}", source_, it->type_name()));
            }
            for (std::size_t i = 0; i < it->size(); ++i) {
                options.collections.push_back(collection_config(it->items()[i], i, hook_modes));
            }
        }
        return options;
    }

private:
    static std::size_t index(mode m) { return static_cast<std::size_t>(m) - 1; }

    static std::string_view mode_prefix(mode m) {
        switch (m) {
        case mode::train: return "train.";
        case mode::eval: return "eval.";
        case mode::predict: return "predict.";
        case mode::global: return "global.";
        }
        return "global.";
    }

    [[noreturn]] void fail(const std::string& path, const std::string& expected, const format::json_value& found) const {
        std::string shown = format::dump_json(found, format::json_style{-1, false, true});
        if (shown.size() > 80) {
            shown = shown.substr(0, 77) + "...";
        }
        throw config_error(fmt::format("{}: {}: expected {}, found {}", source_, path, expected, shown));
    }

    // Reports every key of `object` that is neither in `known` nor (with save
    // keys allowed) a save key, with or without a mode prefix.
    void check_keys(const format::json_value& object, const std::string& path, std::initializer_list<const char*> known,
                    bool save_keys) const {
        static constexpr std::array<const char*, 4> save_names{"save_interval", "save_steps", "start_step", "end_step"};
        std::vector<std::string> unknown;
        for (const auto& member : object.members()) {
            const std::string& key = member.key;
            bool ok = std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; });
            if (!ok && save_keys) {
                std::string_view bare = key;
                for (mode m : all_modes) {
                    if (bare.substr(0, mode_prefix(m).size()) == mode_prefix(m)) {
                        bare.remove_prefix(mode_prefix(m).size());
                        break;
                    }
                }
                ok = std::any_of(save_names.begin(), save_names.end(), [&](const char* k) { return bare == k; });
            }
            if (!ok) {
                std::string quoted = "'";
                quoted += path;
                quoted += key;
                quoted += "'";
                unknown.push_back(std::move(quoted));
            }
        }
        if (!unknown.empty()) {
            std::string list;
            for (const auto& k : unknown) {
                list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
            }
            std::string allowed;
            for (const char* k : known) {
                allowed += fmt::format("{}{}", allowed.empty() ? "" : ", ", k);
            }
            if (save_keys) {
                allowed += ", [train.|eval.|predict.|global.]save_interval/save_steps/start_step/end_step";
            }
            throw config_error(fmt::format("{}: unknown key{} {} (known: {})", source_, unknown.size() > 1 ? "s" : "",
                                           list, allowed));
        }
    }

    [[nodiscard]] std::string string_value(const format::json_value& j, const std::string& path) const {
        if (!j.is_string()) {
            fail(path, "a string", j);
        }
        return j.as_string();
    }

    [[nodiscard]] bool bool_value(const format::json_value& j, const std::string& path) const {
        if (j.is_bool()) {
            return j.as_bool();
        }
        if (j.is_string()) {
            const auto& s = j.as_string();
            if (s == "true" || s == "True") {
                return true;
            }
            if (s == "false" || s == "False") {
                return false;
            }
        }
        fail(path, R"(true or false (or the strings "true"/"false"))", j);
    }

    static std::optional<std::uint64_t> parse_uint(std::string_view s) {
        while (!s.empty() && s.front() == ' ') {
            s.remove_prefix(1);
        }
        while (!s.empty() && s.back() == ' ') {
            s.remove_suffix(1);
        }
        if (!s.empty() && s.front() == '+') {
            s.remove_prefix(1);
        }
        if (s.empty() || s.size() > 18) {
            return std::nullopt;
        }
        std::uint64_t v = 0;
        for (char c : s) {
            if (c < '0' || c > '9') {
                return std::nullopt;
            }
            v = v * 10 + static_cast<std::uint64_t>(c - '0');
        }
        return v;
    }

    [[nodiscard]] std::uint64_t uint_value(const format::json_value& j, const std::string& path, bool positive) const {
        const char* expected = positive ? "a positive integer (a number or a string such as \"100\")"
                                        : "a non-negative integer (a number or a string such as \"10\")";
        std::optional<std::uint64_t> v;
        if (j.type() == format::json_value::kind::unsigned_integer ||
            (j.type() == format::json_value::kind::integer && j.as_int64() >= 0)) {
            v = j.as_uint64();
        } else if (j.is_string()) {
            v = parse_uint(j.as_string());
        }
        if (!v || (positive && *v == 0)) {
            fail(path, expected, j);
        }
        return *v;
    }

    [[nodiscard]] std::vector<std::uint64_t> steps_value(const format::json_value& j, const std::string& path) const {
        std::vector<std::uint64_t> steps;
        if (j.is_array()) {
            for (std::size_t i = 0; i < j.size(); ++i) {
                steps.push_back(uint_value(j.items()[i], fmt::format("{}[{}]", path, i), false));
            }
            return steps;
        }
        if (j.is_number()) {
            steps.push_back(uint_value(j, path, false));
            return steps;
        }
        if (!j.is_string()) {
            fail(path, "a comma-separated list of steps such as \"1,2,3\"", j);
        }
        for (const auto& item : split(j.as_string())) {
            const auto v = parse_uint(item);
            if (!v) {
                fail(path, "a comma-separated list of non-negative integers such as \"1,2,3\"", j);
            }
            steps.push_back(*v);
        }
        return steps;
    }

    // Python's str.split(",") with each item stripped.
    static std::vector<std::string> split(const std::string& text) {
        std::vector<std::string> out;
        std::size_t start = 0;
        while (start <= text.size()) {
            std::size_t end = text.find(',', start);
            if (end == std::string::npos) {
                end = text.size();
            }
            std::string item = text.substr(start, end - start);
            const auto first = item.find_first_not_of(" \t\n");
            const auto last = item.find_last_not_of(" \t\n");
            out.push_back(first == std::string::npos ? std::string() : item.substr(first, last - first + 1));
            start = end + 1;
        }
        return out;
    }

    // Regexes: a comma-separated string (empty items dropped) or a list of strings;
    // each one is compiled here so a bad one is reported with its key.
    [[nodiscard]] std::vector<std::string> regex_list(const format::json_value& j, const std::string& path,
                                        const std::string& owner) const {
        std::vector<std::string> items;
        if (j.is_string()) {
            for (auto& item : split(j.as_string())) {
                if (!item.empty()) {
                    items.push_back(std::move(item));
                }
            }
        } else if (j.is_array()) {
            for (std::size_t i = 0; i < j.size(); ++i) {
                items.push_back(string_value(j.items()[i], fmt::format("{}[{}]", path, i)));
            }
        } else {
            fail(path, "a comma-separated string of regexes or a list of strings", j);
        }
        for (const auto& item : items) {
            try {
                const detail::pattern check(item, fmt::format("collection '{}'", owner));
            } catch (const config_error& e) {
                throw config_error(fmt::format("{}: {}: {}", source_, path, e.what()));
            }
        }
        return items;
    }

    [[nodiscard]] partial_save_mode save_mode_keys(const format::json_value& params, const std::string& path,
                                     std::string_view prefix) const {
        partial_save_mode out;
        const std::string p(prefix);
        if (const auto* it = params.find(p + "save_interval"); it != nullptr) {
            out.save_interval = uint_value(*it, path + p + "save_interval", true);
        }
        if (const auto* it = params.find(p + "save_steps"); it != nullptr) {
            out.save_steps = steps_value(*it, path + p + "save_steps");
        }
        if (const auto* it = params.find(p + "start_step"); it != nullptr) {
            out.start_step = uint_value(*it, path + p + "start_step", false);
        }
        if (const auto* it = params.find(p + "end_step"); it != nullptr) {
            out.end_step = it->is_null() ? std::optional<std::uint64_t>{}
                                         : std::optional<std::uint64_t>{uint_value(*it, path + p + "end_step", false)};
        }
        return out;
    }

    // smdebug's parse_save_config_modes_dict: the unprefixed keys, overridden per mode by the prefixed ones.
    [[nodiscard]] partial_save_config save_modes(const format::json_value& params, const std::string& path) const {
        const partial_save_mode base = save_mode_keys(params, path, "");
        partial_save_config out;
        for (mode m : all_modes) {
            out[index(m)] = base.merged_with(save_mode_keys(params, path, mode_prefix(m)));
        }
        return out;
    }

    [[nodiscard]] std::optional<reduction_config> reductions(const format::json_value& params, const std::string& path) const {
        const auto* reds = params.find("reductions");
        const auto* raw = params.find("save_raw_tensor");
        const auto* shape = params.find("save_shape");
        if (reds == nullptr && raw == nullptr && shape == nullptr) {
            return std::nullopt;
        }
        // smdebug: with "reductions", save_raw_tensor defaults to false; without, tdbg keeps raw tensors.
        const bool save_raw = raw != nullptr ? bool_value(*raw, path + "save_raw_tensor") : reds == nullptr;
        const bool save_shape = shape != nullptr ? bool_value(*shape, path + "save_shape") : false;
        std::string text;
        if (reds != nullptr) {
            text = string_value(*reds, path + "reductions");
        }
        try {
            return reduction_config::parse(text, save_raw, save_shape);
        } catch (const config_error& e) {
            throw config_error(fmt::format("{}: {}reductions: {}", source_, path, e.what()));
        }
    }

    [[nodiscard]] collection collection_config(const format::json_value& entry, std::size_t i, const partial_save_config& hook_modes) const {
        const std::string where = fmt::format("CollectionConfigurations[{}]", i);
        if (!entry.is_object()) {
            fail(where, "an object with CollectionName and CollectionParameters", entry);
        }
        check_keys(entry, where + ".", {"CollectionName", "CollectionParameters"}, false);
        const auto* name_it = entry.find("CollectionName");
        if (name_it == nullptr) {
            throw config_error(fmt::format("{}: {}: 'CollectionName' is missing", source_, where));
        }
        const std::string name = string_value(*name_it, where + ".CollectionName");
        if (name.empty()) {
            fail(where + ".CollectionName", "a non-empty string", *name_it);
        }
        format::json_value params = format::json_value::object();
        if (const auto* it = entry.find("CollectionParameters"); it != nullptr && !it->is_null()) {
            if (!it->is_object()) {
                fail(where + ".CollectionParameters", "an object", *it);
            }
            params = *it;
        }
        const std::string path = where + ".CollectionParameters.";
        check_keys(params, path,
                   {"include_regex", "exclude_regex", "reductions", "save_raw_tensor", "save_shape", "save_histogram"},
                   true);

        collection c(name);
        const partial_save_config own = save_modes(params, path);
        save_config config;
        for (mode m : all_modes) {
            config.set(m, hook_modes[index(m)].merged_with(own[index(m)]).resolve());
        }
        c.set_save_config(config);
        if (auto r = reductions(params, path)) {
            c.set_reduction_config(*r);
        }
        bool has_regex = false;
        if (const auto* it = params.find("include_regex"); it != nullptr) {
            const auto list = regex_list(*it, path + "include_regex", name);
            has_regex = !list.empty();
            c.include(list);
        }
        if (const auto* it = params.find("exclude_regex"); it != nullptr) {
            c.exclude(regex_list(*it, path + "exclude_regex", name));
        }
        if (const auto* it = params.find("save_histogram"); it != nullptr) {
            c.set_save_histogram(bool_value(*it, path + "save_histogram"));
        }
        if (!has_regex && !is_builtin_collection(name)) {
            // smdebug raises InvalidCollectionConfiguration for this when the hook prepares its collections.
            throw config_error(fmt::format(
                "{}: {}: collection '{}' is not a built-in one and has no include_regex, so it would match nothing",
                source_, where, name));
        }
        return c;
    }

    std::string source_;
};

} // namespace detail

TDBG_DECL hook_options parse_hook_config(std::string_view json_text, std::string_view source) {
    return detail::hook_config_parser(std::string(source)).parse(json_text);
}

TDBG_DECL hook_options load_hook_config(const std::string& file) {
    hook_options options = parse_hook_config(read_config_file(file, "hook configuration"), file);
    if (std::getenv("TRAINING_JOB_NAME") != nullptr) {
        const char* tb_env = std::getenv("TENSORBOARD_CONFIG_FILE_PATH");
        const std::filesystem::path tb_file =
            tb_env != nullptr ? tb_env : "/opt/ml/input/config/tensorboardoutputconfig.json";
        options.export_tensorboard = false;
        options.tensorboard_dir.clear();
        std::error_code ec;
        if (std::filesystem::is_regular_file(tb_file, ec)) {
            format::json_value tb;
            try {
                tb = format::parse_json(read_config_file(tb_file, "TensorBoard configuration"), tb_file.string(),
                                       "TensorBoard configuration");
            } catch (const format_error&) {
                tb = format::json_value(); // not JSON: no TensorBoard output, as before
            }
            if (const auto* local = tb.find("LocalPath"); local != nullptr && local->is_string()) {
                options.tensorboard_dir = local->as_string();
                options.export_tensorboard = true;
            }
        }
    }
    return options;
}

TDBG_DECL std::optional<hook_options> hook_config_from_environment() {
    if (const char* path = std::getenv(hook_config_env); path != nullptr) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
            throw config_error(fmt::format("{}={}: no such file", hook_config_env, path));
        }
        return load_hook_config(path);
    }
    std::error_code ec;
    if (std::filesystem::is_regular_file(default_hook_config_path, ec)) {
        return load_hook_config(default_hook_config_path);
    }
    return std::nullopt;
}

} // namespace tdbg
