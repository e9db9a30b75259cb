// The command line's argument parser (see arguments.hpp).

#include "arguments.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

#include <fmt/core.h>

namespace tdbg::cli {

namespace {

constexpr std::size_t help_column = 22; // where an option's description starts
constexpr std::size_t help_width = 79;  // the longest help line

std::string range_text(double min, double max) {
    if (max >= std::numeric_limits<double>::max()) {
        return min == 0 ? std::string("a non-negative number") : fmt::format("a number >= {}", min);
    }
    return fmt::format("a number from {} to {}", min, max);
}

template <class T>
std::string range_text(T min, T max) {
    if (max == std::numeric_limits<T>::max()) {
        return fmt::format("a whole number >= {}", min);
    }
    return fmt::format("a whole number from {} to {}", min, max);
}

// `text` cut into lines of at most `width` characters at spaces; explicit newlines kept.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
    std::vector<std::string> lines;
    std::istringstream paragraphs(text);
    std::string paragraph;
    while (std::getline(paragraphs, paragraph)) {
        std::istringstream words(paragraph);
        std::string word;
        std::string line;
        while (words >> word) {
            if (!line.empty() && line.size() + 1 + word.size() > width) {
                lines.push_back(std::move(line));
                line.clear();
            }
            line += line.empty() ? word : " " + word;
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

std::vector<std::string> split_names(const std::string& names) {
    std::vector<std::string> out;
    std::size_t begin = 0;
    while (begin <= names.size()) {
        const std::size_t comma = names.find(',', begin);
        const std::size_t end = comma == std::string::npos ? names.size() : comma;
        out.push_back(names.substr(begin, end - begin));
        begin = end + 1;
    }
    return out;
}

} // namespace

template <class T>
T parse_number(std::string_view option, const std::string& text, T min, T max) {
    T value{};
    const char* const first = text.data();
    const char* const last = first + text.size();
    const auto [end, ec] = std::from_chars(first, last, value);
    bool ok = !text.empty() && ec == std::errc() && end == last && value >= min && value <= max;
    if constexpr (std::is_floating_point_v<T>) {
        ok = ok && std::isfinite(value);
    }
    if (!ok) {
        throw argument_error(fmt::format("{} expects {}, got '{}'", option, range_text(min, max), text));
    }
    return value;
}

template std::size_t parse_number(std::string_view, const std::string&, std::size_t, std::size_t);
template std::int64_t parse_number(std::string_view, const std::string&, std::int64_t, std::int64_t);
template double parse_number(std::string_view, const std::string&, double, double);

step_range parse_step_range(std::string_view option, const std::string& text) {
    const auto colon = text.find(':');
    if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) {
        throw argument_error(fmt::format("{} expects A:B (the steps from A up to, not including, B; "
                                      "either may be left out), got '{}'",
                                      option, text));
    }
    const auto side = [&](const std::string& number) -> std::optional<std::int64_t> {
        if (number.empty()) {
            return std::nullopt;
        }
        return parse_number<std::int64_t>(option, number, 0, std::numeric_limits<std::int64_t>::max());
    };
    step_range steps;
    steps.begin = side(text.substr(0, colon));
    steps.end = side(text.substr(colon + 1));
    if (steps.begin && steps.end && *steps.end <= *steps.begin) {
        throw argument_error(fmt::format("{} {} holds no step: the end ({}) is excluded and must be greater than "
                                      "the start",
                                      option, text, *steps.end));
    }
    return steps;
}

mode parse_mode_option(std::string_view option, const std::string& text) {
    if (const auto m = try_parse_mode(text)) {
        return *m;
    }
    throw argument_error(fmt::format("{} expects TRAIN, EVAL, PREDICT or GLOBAL, got '{}'", option, text));
}

arguments::arguments(std::string usage, std::string description)
    : usage_(std::move(usage)), description_(std::move(description)) {}

arguments& arguments::section(std::string title) {
    sections_.push_back(std::move(title));
    return *this;
}

arguments& arguments::flag(const std::string& names, std::string help, bool& target, bool value) {
    definitions_.push_back(definition{split_names(names), {}, std::move(help),
                                      [&target, value](const std::string&, const std::string&) { target = value; },
                                      sections_.size() - 1});
    return *this;
}

arguments& arguments::option(const std::string& names, std::string metavar, std::string help,
                             std::function<void(const std::string&, const std::string&)> store) {
    definitions_.push_back(
        definition{split_names(names), std::move(metavar), std::move(help), std::move(store), sections_.size() - 1});
    return *this;
}

arguments& arguments::text(const std::string& names, std::string metavar, std::string help, std::string& target) {
    return option(names, std::move(metavar), std::move(help),
                  [&target](const std::string& opt, const std::string& value) {
                      if (value.empty()) {
                          throw argument_error(fmt::format("{} needs a non-empty value", opt));
                      }
                      target = value;
                  });
}

arguments& arguments::text(const std::string& names, std::string metavar, std::string help,
                            std::optional<std::string>& target) {
    return option(names, std::move(metavar), std::move(help),
                  [&target](const std::string& opt, const std::string& value) {
                      if (value.empty()) {
                          throw argument_error(fmt::format("{} needs a non-empty value", opt));
                      }
                      target = value;
                  });
}

arguments& arguments::epilog(std::string text) {
    epilog_ = std::move(text);
    return *this;
}

const arguments::definition* arguments::find(std::string_view name) const {
    for (const definition& d : definitions_) {
        for (const std::string& n : d.names) {
            if (n == name) {
                return &d;
            }
        }
    }
    return nullptr;
}

arguments::parsed arguments::parse(const std::vector<std::string>& args) const {
    parsed out;
    // Help first: `tdbg rules --bogus --help` helps rather than complains. Only words in an
    // option's place count (not the value of -o, not a word after --).
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            break;
        }
        if (a == "-h" || a == "--help") {
            out.help = true;
            return out;
        }
        const definition* d = find(a);
        if (d != nullptr && !d->metavar.empty()) {
            ++i; // its value, whatever it looks like
        }
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            out.positional.insert(out.positional.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        }
        if (a.size() < 2 || a[0] != '-') {
            out.positional.push_back(a);
            continue;
        }
        const std::size_t eq = a.rfind("--", 0) == 0 ? a.find('=') : std::string::npos;
        const std::string name = a.substr(0, eq);
        const definition* d = find(name);
        if (d == nullptr) {
            throw argument_error(fmt::format("unknown option '{}'", name));
        }
        if (d->metavar.empty()) {
            if (eq != std::string::npos) {
                throw argument_error(fmt::format("{} takes no value", name));
            }
            d->store(name, {});
        } else if (eq != std::string::npos) {
            d->store(name, a.substr(eq + 1));
        } else if (i + 1 < args.size()) {
            d->store(name, args[++i]);
        } else {
            throw argument_error(fmt::format("{} needs a value ({})", name, d->metavar));
        }
    }
    return out;
}

std::optional<std::vector<std::string>> arguments::parse_or_help(const std::vector<std::string>& args,
                                                                std::ostream& out) const {
    parsed p = parse(args);
    if (p.help) {
        out << help();
        return std::nullopt;
    }
    return std::move(p.positional);
}

std::string arguments::help() const {
    std::string out;
    const std::vector<std::string> usage_lines = wrap(usage_, std::string::npos);
    for (std::size_t i = 0; i < usage_lines.size(); ++i) {
        out += i == 0 ? "usage: " : "       ";
        out += usage_lines[i];
        out += '\n';
    }
    if (!description_.empty()) {
        out += "\n" + description_;
        if (description_.back() != '\n') {
            out += "\n";
        }
    }
    for (std::size_t s = 0; s < sections_.size(); ++s) {
        bool titled = false;
        for (const definition& d : definitions_) {
            if (d.section != s) {
                continue;
            }
            if (!titled) {
                out += fmt::format("\n{}:\n", sections_[s].empty() ? "options" : sections_[s]);
                titled = true;
            }
            std::string names;
            for (const std::string& n : d.names) {
                names += names.empty() ? n : ", " + n;
            }
            std::string head = "  " + names + (d.metavar.empty() ? "" : " " + d.metavar);
            const std::vector<std::string> lines = wrap(d.help, help_width - help_column);
            if (head.size() + 2 > help_column) {
                out += head + "\n";
                head.clear();
            }
            for (const std::string& line : lines) {
                out += head;
                out.append(help_column - head.size(), ' ');
                out += line;
                out += '\n';
                head.clear();
            }
        }
    }
    if (!epilog_.empty()) {
        out += "\n" + epilog_;
        if (epilog_.back() != '\n') {
            out += "\n";
        }
    }
    return out;
}

} // namespace tdbg::cli
