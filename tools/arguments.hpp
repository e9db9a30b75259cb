#pragma once
// The command line's one argument parser. A subcommand declares its options once, each bound to
// a field of its options struct; the same declarations parse argv and write `--help`, so the
// help text cannot drift from what is accepted.
//
//     tdbg::cli::arguments args("tdbg ls DIR [--no-values]", "Summarises the run in DIR ...");
//     args.flag("--no-values", "do not read one value per tensor", o.no_values);
//     return args.run_or_help(argv, out, [&](const std::vector<std::string>& positional) {
//         return ...;                                          // argument_error on a bad argument;
//     });                                                      // exit_ok after the help
//
// What is accepted, for every subcommand alike:
// - `--name VALUE`, `--name=VALUE`, `-n VALUE`; a value is the next word as it is, even one
//   that starts with '-' (`-o -h` writes to a file named "-h"; `--rtol -1` is refused by the
//   number's range, not taken for an option);
// - `--` ends the options: every word after it is positional;
// - `-h`/`--help` wherever an option may stand: parse() reports it and nothing else is checked;
// - `-` alone is positional (standard input or output, where the command says so).

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "argument_error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/trial/step_state.hpp"

namespace tdbg::cli {

/// `text` as a number of type T from `min` to `max` (an integer for integral T: no sign where T is
/// unsigned, no fraction, no trailing characters; a finite number for floating-point T); a
/// argument_error naming `option` and the range otherwise. The command line's one number parser.
template <class T>
[[nodiscard]] T parse_number(std::string_view option, const std::string& text, T min, T max);

extern template std::size_t parse_number(std::string_view, const std::string&, std::size_t, std::size_t);
extern template std::int64_t parse_number(std::string_view, const std::string&, std::int64_t, std::int64_t);
extern template double parse_number(std::string_view, const std::string&, double, double);

/// `text` as the steps from A up to, not including, B: `A:B`, `A:`, `:B` or `:` (as Python's
/// A:B), whole numbers >= 0 with B > A; a side left out has no bound. An argument_error naming
/// `option` otherwise.
[[nodiscard]] step_range parse_step_range(std::string_view option, const std::string& text);

/// `text` as a mode (TRAIN, EVAL, PREDICT or GLOBAL); an argument_error naming `option` otherwise.
[[nodiscard]] mode parse_mode_option(std::string_view option, const std::string& text);

/// The options of one subcommand: how to parse them and how to describe them.
class arguments {
public:
    /// `usage`: the usage lines after "usage: " (several separated by '\n'); `description`:
    /// the paragraphs before the options (may be empty).
    arguments(std::string usage, std::string description);

    /// Starts a group of options under `title` in the help text ("rules", "output", ...).
    arguments& section(std::string title);

    /// An option without a value that sets `target` (to `value`).
    arguments& flag(const std::string& names, std::string help, bool& target, bool value = true);
    /// An option with a value, handed to `store` (which throws argument_error for a bad one).
    /// `names` is "--long" or "-s,--long"; `metavar` names the value in the help ("FILE").
    arguments& option(const std::string& names, std::string metavar, std::string help,
                      std::function<void(const std::string& option, const std::string& value)> store);
    /// An option whose value is any non-empty text.
    arguments& text(const std::string& names, std::string metavar, std::string help, std::string& target);
    /// An option whose value is any non-empty text, unset unless given.
    arguments& text(const std::string& names, std::string metavar, std::string help,
                    std::optional<std::string>& target);
    /// An option whose value is a number from `min` to `max` (parse_number).
    template <class T>
    arguments& number(const std::string& names, std::string metavar, std::string help, T& target, T min, T max) {
        static_assert(std::is_arithmetic_v<T>);
        return option(names, std::move(metavar), std::move(help),
                      [&target, min, max](const std::string& opt, const std::string& value) {
                          target = parse_number<T>(opt, value, min, max);
                      });
    }

    /// Text after the options in the help (exit statuses, notes).
    arguments& epilog(std::string text);

    struct parsed {
        /// The words that are not options, in order.
        std::vector<std::string> positional;
        /// -h or --help was given: print help() and do nothing else.
        bool help = false;
    };
    /// Parses `args` (the words after the subcommand's name), calling each option's store as it
    /// is met; argument_error for an unknown option or a missing value.
    [[nodiscard]] parsed parse(const std::vector<std::string>& args) const;

    /// parse(), for a subcommand: the positional words, or nothing when help was asked (then
    /// written to `out`: the subcommand has nothing more to do).
    [[nodiscard]] std::optional<std::vector<std::string>> parse_or_help(const std::vector<std::string>& args,
                                                                        std::ostream& out) const;

    /// parse_or_help(), then `run(positional words)`: a subcommand's exit status, or 0 (exit_ok)
    /// when help was asked.
    template <class Run>
    [[nodiscard]] int run_or_help(const std::vector<std::string>& args, std::ostream& out, Run&& run) const {
        const auto positional = parse_or_help(args, out);
        return positional ? std::forward<Run>(run)(*positional) : 0;
    }

    /// The help text: usage, description, the options by section, the epilog.
    [[nodiscard]] std::string help() const;

private:
    struct definition {
        std::vector<std::string> names; // "-o", "--output"
        std::string metavar; // empty for a flag
        std::string help;
        std::function<void(const std::string&, const std::string&)> store;
        std::size_t section = 0;
    };
    [[nodiscard]] const definition* find(std::string_view name) const;

    std::string usage_;
    std::string description_;
    std::vector<std::string> sections_{""};
    std::vector<definition> definitions_;
    std::string epilog_;
};

} // namespace tdbg::cli
