#pragma once
// Reading `tdbg diff --json` output for `tdbg report --diff FILE`: only the
// fields the page shows, each checked, every error naming the file.

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "report/model.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::cli::report {

namespace detail {

// The fields of one JSON object of the diff file, with errors that name the file and the object.
class diff_fields {
public:
    diff_fields(const tdbg::format::json_value& object, std::string file, std::string where)
        : object_(object), file_(std::move(file)), where_(std::move(where)) {
        if (!object.is_object()) {
            fail(fmt::format("{} is a JSON {}, expected an object", where_, object.type_name()));
        }
    }

    [[nodiscard]] const tdbg::format::json_value& get(std::string_view key) const {
        const auto* v = object_.find(key);
        if (v == nullptr) {
            fail(fmt::format("{} has no \"{}\"", where_, key));
        }
        return *v;
    }
    [[nodiscard]] std::string text(std::string_view key) const {
        return checked(key, get(key).is_string(), "a string").as_string();
    }
    [[nodiscard]] double number(std::string_view key) const {
        return checked(key, get(key).is_number(), "a number").as_double();
    }
    /// A number, or none for null: `tdbg diff --json` writes null for a difference that is not finite.
    [[nodiscard]] std::optional<double> number_or_null(std::string_view key) const {
        const auto& v = get(key);
        if (v.is_null()) {
            return std::nullopt;
        }
        return checked(key, v.is_number(), "a number or null").as_double();
    }
    [[nodiscard]] std::int64_t integer(std::string_view key) const {
        const auto& v = checked(key, get(key).is_integer(), "a whole number");
        try {
            return v.as_int64();
        } catch (const tdbg::error&) {
            fail(fmt::format("{}: \"{}\" is out of range", where_, key));
        }
    }
    [[nodiscard]] bool boolean(std::string_view key) const {
        return checked(key, get(key).is_bool(), "true or false").as_bool();
    }
    [[nodiscard]] const tdbg::format::json_value& array(std::string_view key) const {
        return checked(key, get(key).is_array(), "an array");
    }
    [[nodiscard]] std::string mode(std::string_view key) const {
        std::string m = text(key);
        if (m != "TRAIN" && m != "EVAL" && m != "PREDICT" && m != "GLOBAL") {
            fail(fmt::format("{}: \"{}\" is '{}', expected TRAIN, EVAL, PREDICT or GLOBAL", where_, key, m));
        }
        return m;
    }

    /// The member `key`, or nullptr when there is none.
    [[nodiscard]] const tdbg::format::json_value* find(std::string_view key) const { return object_.find(key); }

    [[noreturn]] void fail(const std::string& what) const {
        throw tdbg::error(fmt::format("--diff {}: {}", file_, what));
    }

private:
    [[nodiscard]] const tdbg::format::json_value& checked(std::string_view key, bool ok, std::string_view expected) const {
        const auto& v = get(key);
        if (!ok) {
            fail(fmt::format("{}: \"{}\" is a JSON {}, expected {}", where_, key, v.type_name(), expected));
        }
        return v;
    }

    const tdbg::format::json_value& object_;
    std::string file_;
    std::string where_;
};

inline diverging_tensor read_diverging_tensor(const diff_fields& f) {
    diverging_tensor t;
    t.tensor = f.text("tensor");
    t.tensor_b = f.text("tensor_b");
    t.step = f.integer("step");
    t.mode = f.mode("mode");
    t.mode_step = f.integer("mode_step");
    t.max_abs_diff = f.number_or_null("max_abs_diff");
    t.max_rel_diff = f.number_or_null("max_rel_diff");
    return t;
}

} // namespace detail

/// The diff in `text`, `tdbg diff --json` output read from `file` (named in every error).
inline diff_summary parse_diff(std::string_view text, const std::string& file) {
    const auto doc = tdbg::format::parse_json(text, file, "tdbg diff output");
    const detail::diff_fields top(doc, file, "the document");
    if (!doc.contains("format") || !doc.at("format").is_string() || doc.at("format").as_string() != "tdbg-diff/1") {
        top.fail(fmt::format(R"(not tdbg diff --json output: "format" is {}, expected "tdbg-diff/1")",
                             doc.contains("format") ? tdbg::format::dump_json(doc.at("format")) : "missing"));
    }
    diff_summary d;
    d.source = file;
    d.run_a = top.text("run_a");
    d.run_b = top.text("run_b");
    d.agree = top.boolean("agree");
    d.rtol = top.number("rtol");
    d.atol = top.number("atol");
    if (!top.get("first_divergence").is_null()) {
        const detail::diff_fields f(top.get("first_divergence"), file, "first_divergence");
        first_divergence first;
        static_cast<diverging_tensor&>(first) = detail::read_diverging_tensor(f);
        first.worker = f.text("worker");
        first.reason = f.text("reason");
        const auto& index = f.array("index");
        for (std::size_t i = 0; i < index.size(); ++i) {
            if (!index.at(i).is_integer()) {
                f.fail(fmt::format("first_divergence: \"index\" holds {}, expected whole numbers",
                                   index.at(i).type_name()));
            }
            first.index.push_back(index.at(i).as_int64());
        }
        // "flat_index" (since tdbg diff wrote it; a file without it tells by the index alone).
        const auto* flat = f.find("flat_index");
        if (flat != nullptr && !flat->is_null() && !flat->is_integer()) {
            f.fail(fmt::format("first_divergence: \"flat_index\" is a JSON {}, expected a whole number or null",
                               flat->type_name()));
        }
        first.elements_compared = (flat != nullptr && flat->is_integer()) || !first.index.empty();
        d.first = first;
    }
    const auto& tensors = top.array("tensors");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        d.tensors.push_back(
            detail::read_diverging_tensor(detail::diff_fields(tensors.at(i), file, fmt::format("tensors[{}]", i))));
    }
    for (const auto& [key, names] : {std::pair{"only_in_a", &d.only_in_a}, std::pair{"only_in_b", &d.only_in_b}}) {
        const auto& list = top.array(key);
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (!list.at(i).is_string()) {
                top.fail(fmt::format("\"{}\" holds {}, expected tensor names", key, list.at(i).type_name()));
            }
            names->push_back(list.at(i).as_string());
        }
    }
    // Runs that part only by the tensors they hold have no first divergence (null): a tensor of
    // one run only is listed, not compared step by step.
    if (!d.agree && !d.first && d.only_in_a.empty() && d.only_in_b.empty()) {
        top.fail(R"("agree" is false but "first_divergence" is null and no tensor is in one run only)");
    }
    return d;
}

/// The diff in `file`, `tdbg diff --json` output (a file, or a pipe such as `<(tdbg diff A B --json)`).
inline diff_summary read_diff(const std::string& file) {
    constexpr std::size_t limit = std::size_t{64} << 20U;
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::error_code ec(errno, std::generic_category());
        throw tdbg::error(fmt::format("--diff {}: cannot read it: {}", file, ec.message()));
    }
    std::string text;
    std::array<char, 65536> buffer{};
    while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
        text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
        if (text.size() > limit) {
            throw tdbg::error(fmt::format("--diff {}: larger than 64 MiB, not tdbg diff output", file));
        }
    }
    if (in.bad()) {
        throw tdbg::error(fmt::format("--diff {}: cannot read it", file));
    }
    return parse_diff(text, file);
}

} // namespace tdbg::cli::report
