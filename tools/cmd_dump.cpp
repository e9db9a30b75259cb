// `tdbg dump DIR --json`: the reading of a whole run in the golden schema
// ("smdebug-golden/1"), laid out as Python's json.dumps(indent=1, sort_keys=True),
// written as it is read (tdbg/trial/golden.hpp's write_golden_document); or of some of its
// tensors, steps, a mode (--tensors, --steps, --mode).

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "arguments.hpp"
#include "command_registry.hpp"
#include "open_run.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/trial/golden.hpp"
#include "tdbg/trial/options.hpp"
#include "tdbg/trial/trial.hpp"

namespace {

int run_dump(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    bool json = true;
    tdbg::commands::dump_options o;
    tdbg::cli::arguments parser("tdbg dump DIR [--json] [--tensors REGEX] [--steps A:B] [--mode MODE]",
                                "Prints everything the trial reads from the run in DIR (a directory, or\n"
                                "s3://bucket/prefix when built with S3) as JSON, in the\n"
                                "\"smdebug-golden/1\" schema: workers, modes, steps, collections, and for\n"
                                "every tensor, step and worker its dtype, shape, SHA-256 of its elements,\n"
                                "the values of tensors with at most 16 elements, and all 18 reductions\n"
                                "(stored ones as saved, the others computed). Keys are sorted and indented\n"
                                "as Python's json.dumps(indent=1, sort_keys=True), so the output can be\n"
                                "compared with a dump of Python smdebug's reading.\n"
                                "\n"
                                "The filters keep part of the run: \"tensors\" holds the tensors matched\n"
                                "(with the entries and steps kept, perhaps none), \"steps\" and\n"
                                "\"global_step_to_mode\" the steps kept, and the lists of tensor names only\n"
                                "the tensors matched; the rest describes the whole run.\n");
    parser.flag("--json", "the output format (the default and, for now, the only one)", json);
    tdbg::golden_filter& filter = o.filter;
    parser.section("filters");
    parser.option("--tensors", "REGEX",
                  "only the tensors whose name it matches (searched, as smdebug's tensor regexes)",
                  [&filter](const std::string&, const std::string& value) { filter.tensor_regex = value; });
    parser.option("--steps", "A:B",
                  "only the steps from A up to, not including, B (as Python's A:B; either may be left out): "
                  "mode steps with --mode, else global steps",
                  [&filter](const std::string& opt, const std::string& value) {
                      filter.steps = tdbg::cli::parse_step_range(opt, value);
                  });
    parser.option("--mode", "MODE", "only the steps of TRAIN, EVAL or PREDICT (GLOBAL: every mode, the default)",
                  [&filter](const std::string& opt, const std::string& value) {
                      filter.only_mode = tdbg::cli::parse_mode_option(opt, value);
                  });
    return parser.run_or_help(args, out, [&](const std::vector<std::string>& positional) {
        o.run = tdbg::cli::single_run_argument(positional);
        return tdbg::commands::dump(o, out, err);
    });
}

} // namespace

int tdbg::commands::dump(const dump_options& options, std::ostream& out, std::ostream& err) {
    return tdbg::cli::guarded("dump", err, [&] {
        // The document is written as it is made, a tensor step at a time, and the event files
        // kept in memory are bounded: memory grows with the run's index, not with its values.
        tdbg::trial_options trial_options;
        trial_options.file_cache_bytes = std::uint64_t{8} << 20U;
        const tdbg::trial trial = tdbg::cli::open_run(options.run, trial_options);
        tdbg::write_golden_document(trial, fmt::format("tdbg {} (C++)", TDBG_VERSION), out, options.filter);
        out.flush();
        return tdbg::cli::exit_ok;
    });
}

namespace {
const tdbg::cli::command_registrar register_dump{
    tdbg::cli::command{"dump", "print a run's full reading as JSON (the golden schema)", &run_dump}};
} // namespace
