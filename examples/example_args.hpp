#pragma once
// The command line the example trainers share: `--out DIR` and flags that take a
// whole number (`--steps N`, `--save-interval K`, ...), each with its default.

#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace example_args {

/// What a trainer was asked for.
struct parsed {
    /// The run directory (`--out DIR`, required).
    std::string out;
    /// Every whole-number flag, with the value given or its default.
    std::map<std::string, long, std::less<>> numbers;
    /// `--help` or `-h` was given (nothing else is checked then).
    bool help = false;

    /// The value of `flag`, one of those given to parse().
    [[nodiscard]] long number(std::string_view flag) const { return numbers.find(flag)->second; }
};

/// Parses argv: `--out DIR` and the flags of `defaults`, each with a value in
/// [0, 10^12). Throws std::invalid_argument naming the argument at fault.
inline parsed parse(int argc, char** argv, std::map<std::string, long, std::less<>> defaults) {
    parsed p;
    p.numbers = std::move(defaults);
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            p.help = true;
            return p;
        }
        if (i + 1 >= argc) {
            throw std::invalid_argument("missing value after " + flag);
        }
        const std::string value = argv[++i];
        if (flag == "--out") {
            p.out = value;
            continue;
        }
        const auto entry = p.numbers.find(flag);
        if (entry == p.numbers.end()) {
            throw std::invalid_argument("unknown option " + flag);
        }
        const bool digits = !value.empty() && value.size() <= 12 &&
                            value.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) {
            throw std::invalid_argument("bad number '" + value + "' for " + flag);
        }
        entry->second = std::stol(value);
    }
    if (p.out.empty()) {
        throw std::invalid_argument("--out DIR is required");
    }
    return p;
}

} // namespace example_args
