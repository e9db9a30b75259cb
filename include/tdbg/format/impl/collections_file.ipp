#pragma once
/// \file
/// Definitions of tdbg/format/collections_file.hpp.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/collections_file.hpp"
#include "tdbg/format/detail/json_fields.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::format {

namespace detail {

// smdebug's ReductionConfig.to_json_dict order: plain reductions, norms,
// abs reductions, abs norms, each group in the order given.
inline std::string reductions_string(const std::vector<reduction>& reductions) {
    std::string out;
    for (int group = 0; group < 4; ++group) {
        const bool abs = group >= 2;
        const bool norm = group % 2 == 1;
        for (const reduction& r : reductions) {
            if (r.abs == abs && is_norm(r.kind) == norm) {
                if (!out.empty()) {
                    out.push_back(',');
                }
                out += reduction_config_name(r);
            }
        }
    }
    return out;
}

inline void append_save_config_mode(std::string& out, const std::optional<save_config_mode>& m) {
    if (!m) {
        out += "null";
        return;
    }
    out += fmt::format(R"({{"save_interval": {}, "save_steps": )", m->save_interval);
    append_json_list(out, m->save_steps);
    out += fmt::format(R"(, "start_step": {}, "end_step": )", m->start_step);
    out += m->end_step ? fmt::format("{}}}", *m->end_step) : std::string("null}");
}

inline void append_collection(std::string& out, const collection_spec& c) {
    out += "{\"name\": ";
    append_json_string(out, c.name);
    out += ", \"include_regex\": ";
    append_json_list(out, c.include_regex);
    if (!c.exclude_regex.empty()) {
        out += ", \"exclude_regex\": ";
        append_json_list(out, c.exclude_regex);
    }
    // smdebug keeps tensor names in a set and writes them sorted.
    std::vector<std::string> names(c.tensor_names);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    out += ", \"tensor_names\": ";
    append_json_list(out, names);
    const collection_reduction_config& r = c.reduction_config;
    out += R"(, "reduction_config": {"save_raw_tensor": )";
    out += r.save_raw_tensor ? "true" : "false";
    out += ", \"reductions\": ";
    append_json_string(out, reductions_string(r.reductions));
    out += ", \"save_shape\": ";
    out += r.save_shape ? "true" : "false";
    out += "}, \"save_config\": {";
    for (std::size_t i = 0; i < all_modes.size(); ++i) {
        out += i == 0 ? "\"" : ", \"";
        out += mode_name(all_modes[i]);
        out += "\": ";
        append_save_config_mode(out, c.save_config.get(all_modes[i]));
    }
    out += "}, \"save_histogram\": ";
    out += c.save_histogram ? "true" : "false";
    out += "}";
}

} // namespace detail

TDBG_DECL std::string to_json(const collections_file& file) {
    std::set<std::string_view> seen;
    std::string out = "{\"collections\": {";
    for (std::size_t i = 0; i < file.collections.size(); ++i) {
        const collection_spec& c = file.collections[i];
        if (!seen.insert(c.name).second) {
            throw error(fmt::format("collections file: two collections are named '{}'", c.name));
        }
        if (i != 0) {
            out += ", ";
        }
        append_json_string(out, c.name);
        out += ": ";
        detail::append_collection(out, c);
    }
    out += fmt::format(R"(}}, "_meta": {{"num_workers": {}}}}})", file.num_workers);
    return out;
}

namespace detail {

inline save_config_mode parse_save_config_mode(const json_fields& f, const json_value& j, const std::string& path) {
    save_config_mode m;
    if (const auto* it = j.find("save_interval"); it != nullptr && !it->is_null()) {
        m.save_interval = f.unsigned_integer(*it, path + ".save_interval");
    }
    if (const auto* it = j.find("save_steps"); it != nullptr && !it->is_null()) {
        if (!it->is_array()) {
            f.fail(path + ".save_steps", fmt::format("must be a list of integers, found {}", it->type_name()));
        }
        for (std::size_t i = 0; i < it->size(); ++i) {
            m.save_steps.push_back(f.unsigned_integer(it->items()[i], fmt::format("{}.save_steps[{}]", path, i)));
        }
    }
    if (const auto* it = j.find("start_step"); it != nullptr && !it->is_null()) {
        m.start_step = f.unsigned_integer(*it, path + ".start_step");
    }
    if (const auto* it = j.find("end_step"); it != nullptr && !it->is_null()) {
        m.end_step = f.unsigned_integer(*it, path + ".end_step");
    }
    return m;
}

inline collection_spec parse_collection(const json_fields& f, const std::string& key, const json_value& j,
                                        const std::string& path) {
    if (!j.is_object()) {
        f.fail(path, fmt::format("must be an object, found {}", j.type_name()));
    }
    collection_spec c;
    c.name = key;
    if (const auto* it = j.find("name"); it != nullptr && !it->is_null()) {
        c.name = f.string(*it, path + ".name");
    }
    if (const auto* it = j.find("include_regex"); it != nullptr && !it->is_null()) {
        c.include_regex = f.string_list(*it, path + ".include_regex");
    }
    if (const auto* it = j.find("exclude_regex"); it != nullptr && !it->is_null()) {
        c.exclude_regex = f.string_list(*it, path + ".exclude_regex");
    }
    if (const auto* it = j.find("tensor_names"); it != nullptr && !it->is_null()) {
        c.tensor_names = f.string_list(*it, path + ".tensor_names");
    }
    if (const auto* it = j.find("reduction_config"); it != nullptr && !it->is_null()) {
        const std::string rpath = path + ".reduction_config";
        if (!it->is_object()) {
            f.fail(rpath, fmt::format("must be an object, found {}", it->type_name()));
        }
        // smdebug's ReductionConfig.from_dict defaults a missing flag to false.
        c.reduction_config.save_raw_tensor = false;
        if (const auto* flag = it->find("save_raw_tensor"); flag != nullptr) {
            c.reduction_config.save_raw_tensor = f.boolean(*flag, rpath + ".save_raw_tensor");
        }
        if (const auto* flag = it->find("save_shape"); flag != nullptr) {
            c.reduction_config.save_shape = f.boolean(*flag, rpath + ".save_shape");
        }
        if (const auto* list = it->find("reductions"); list != nullptr && !list->is_null()) {
            const std::string text = f.string(*list, rpath + ".reductions");
            for (const std::string_view item : split_list(text)) {
                const auto r = parse_reduction(item);
                if (!r) {
                    f.fail(rpath + ".reductions", fmt::format("holds an unknown reduction '{}'", item));
                }
                c.reduction_config.reductions.push_back(*r);
            }
        }
    }
    if (const auto* it = j.find("save_config"); it != nullptr && !it->is_null()) {
        const std::string spath = path + ".save_config";
        if (!it->is_object()) {
            f.fail(spath, fmt::format("must be an object, found {}", it->type_name()));
        }
        for (const auto& [mode_key, value] : it->members()) {
            std::string mode_path = spath;
            mode_path += '.';
            mode_path += mode_key;
            const auto m = try_parse_mode(mode_key);
            if (!m) {
                f.fail(mode_path, "is not a mode (TRAIN, EVAL, PREDICT or GLOBAL)");
            }
            if (value.is_null()) {
                c.save_config.set(*m, std::nullopt);
            } else if (value.is_object()) {
                c.save_config.set(*m, parse_save_config_mode(f, value, mode_path));
            } else {
                f.fail(mode_path, fmt::format("must be an object or null, found {}", value.type_name()));
            }
        }
    }
    if (const auto* it = j.find("save_histogram"); it != nullptr) {
        c.save_histogram = f.boolean(*it, path + ".save_histogram");
    }
    return c;
}

} // namespace detail

TDBG_DECL collections_file parse_collections_file(std::string_view json, std::string_view file) {
    const json_value doc = parse_json(json, file, "collections file");
    const detail::json_fields f(file, "collections file");
    if (!doc.is_object()) {
        f.fail("(top level)", fmt::format("must be an object, found {}", doc.type_name()));
    }
    collections_file out;
    const auto& collections = f.object(doc, "collections", "collections");
    out.collections.reserve(collections.size());
    for (const auto& [key, value] : collections.members()) {
        out.collections.push_back(detail::parse_collection(f, key, value, "collections." + key));
    }
    if (const auto* meta = doc.find("_meta"); meta != nullptr) {
        if (!meta->is_object()) {
            f.fail("_meta", fmt::format("must be an object, found {}", meta->type_name()));
        }
        if (const auto* n = meta->find("num_workers"); n != nullptr) {
            const std::int64_t workers = f.integer(*n, "_meta.num_workers");
            if (workers < 1 || workers > 1000000) {
                f.fail("_meta.num_workers", fmt::format("must be between 1 and 1000000, found {}", workers));
            }
            out.num_workers = static_cast<int>(workers);
        }
    }
    return out;
}

} // namespace tdbg::format
