#pragma once
// What the page of `tdbg report` shows, as plain data: cmd_report.cpp fills a
// `document` from a run (or several, and `tdbg diff --json` output), and
// page.hpp draws it. Nothing here knows about trials, so tests can make one up.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tdbg/diff/document.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::cli::report {

/// One value of a series: at a global step (mode_step is the step of the point's mode).
struct point {
    std::int64_t step = 0;
    std::int64_t mode_step = 0;
    double value = 0; ///< may be NaN or infinite: drawn as a marker, not on the line
};

/// The values of one mode written by one worker (of one run, when the report compares runs).
struct series {
    std::string mode; ///< "TRAIN", "EVAL", "PREDICT", "GLOBAL"
    std::string worker; ///< "worker_0"
    std::vector<point> points;
    std::string run; ///< the run's name in a report of several runs, else empty
};

/// One reduction ("mean", "l2", or "value" for a scalar tensor) over steps.
struct reduction_plot {
    std::string reduction;
    std::vector<series> lines;
};

/// The histogram of a tensor's values at one step.
struct histogram_column {
    std::int64_t step = 0;
    std::string mode;
    std::int64_t mode_step = 0;
    std::vector<std::size_t> counts; ///< one per bin, finite values only
    std::size_t finite = 0;
    std::size_t non_finite = 0; ///< NaN and infinities
    double min = 0, max = 0, mean = 0; ///< of the finite values (meaningless when finite == 0)
};

/// How the values of a tensor spread over bins, step by step, for one worker (of one run).
struct distribution {
    std::string worker;
    double low = 0, high = 1; ///< the bins split [low, high] evenly
    std::size_t bins = 0;
    std::vector<histogram_column> columns; ///< ascending steps
    std::size_t steps_with_values = 0; ///< columns may be a sample of these
    std::string run; ///< the run's name in a report of several runs, else empty
};

/// Everything shown for one tensor.
struct tensor_section {
    std::string name;
    std::string group; ///< the page's section it is shown in ("flagged by a rule", "gradients", ...); may be empty
    std::string summary; ///< "float32 [16, 8] · 13 steps (TRAIN, EVAL) · saved: value"
    std::vector<std::string> notes; ///< what could not be drawn, and why
    std::vector<reduction_plot> plots;
    std::vector<distribution> distributions;
    bool has_non_finite = false;
};

/// One mode's steps, for the overview and the step axis (every step of the run is in one).
struct mode_steps {
    std::string mode;
    std::vector<std::int64_t> global_steps; ///< ascending
};

/// One run of a report that compares several.
struct run_summary {
    std::string name; ///< as the legends show it
    std::string path;
    std::string state;
    std::vector<std::string> workers;
    std::vector<mode_steps> modes;
    std::size_t tensors_in_run = 0;
};

/// What `tdbg diff --json` found (tdbg/diff/document.hpp), and the file it was read from.
struct diff_summary : tdbg::diff_document {
    std::string source;
};

/// The whole report.
struct document {
    std::string title; ///< the page's heading
    std::string run_name;
    std::string run_path;
    std::string state; ///< "finished" or what is known about a live run
    std::vector<std::string> workers;
    std::vector<mode_steps> modes;
    std::vector<std::string> collections;
    std::size_t tensors_in_run = 0;
    std::string selection; ///< how the shown tensors were chosen, for the header
    std::vector<std::string> notes;
    std::vector<tdbg::rules::evaluation_result> rules;
    std::vector<tensor_section> tensors;
    /// The runs, when the report compares several (else empty: the fields above describe the run).
    std::vector<run_summary> runs;
    /// The run of each rule result, parallel to `rules`, when the report compares several runs.
    std::vector<std::string> rule_runs;
    /// What `tdbg diff` found (--diff FILE).
    std::optional<diff_summary> diff;
    std::string generated; ///< "written by tdbg report 0.1.0 on 2024-05-01 12:00 UTC"
};

} // namespace tdbg::cli::report
