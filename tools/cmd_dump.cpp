// `tdbg dump DIR --json`: the reading of a whole run in the golden schema
// ("smdebug-golden/1"), laid out as Python's json.dumps(indent=1, sort_keys=True),
// written as it is read (golden.hpp's write_golden_document).

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "arguments.hpp"
#include "commands.hpp"
#include "golden.hpp"
#include "open_run.hpp"

namespace {

int run_dump(const std::vector<std::string>& args, std::ostream& out, std::ostream& /*err*/) {
    bool json = true;
    tdbg::cli::arguments parser(
        "tdbg dump DIR [--json]",
        "Prints everything the trial reads from the run in DIR (a directory, or\n"
        "s3://bucket/prefix when built with S3) as JSON, in the\n"
        "\"smdebug-golden/1\" schema: workers, modes, steps, collections, and for\n"
        "every tensor, step and worker its dtype, shape, SHA-256 of its elements,\n"
        "the values of tensors with at most 16 elements, and all 18 reductions\n"
        "(stored ones as saved, the others computed). Keys are sorted and indented\n"
        "as Python's json.dumps(indent=1, sort_keys=True), so the output can be\n"
        "compared with a dump of Python smdebug's reading.\n");
    parser.flag("--json", "the output format (the default and, for now, the only one)", json);
    const auto positional = parser.parse_or_help(args, out);
    if (!positional) {
        return tdbg::cli::exit_ok;
    }
    // The document is written as it is made, a tensor step at a time, and the event files
    // kept in memory are bounded: memory grows with the run's index, not with its values.
    tdbg::trial_options options;
    options.file_cache_bytes = std::uint64_t{8} << 20U;
    const tdbg::trial trial = tdbg::cli::open_run(tdbg::cli::single_run_argument(*positional), options);
    tdbg::cli::write_golden_document(trial, fmt::format("tdbg {} (C++)", TDBG_VERSION), out);
    out.flush();
    return tdbg::cli::exit_ok;
}

const tdbg::cli::command_registrar register_dump{
    tdbg::cli::command{"dump", "print a run's full reading as JSON (the golden schema)", &run_dump}};

} // namespace
