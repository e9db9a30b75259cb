// torch_hook against Python smdebug's PyTorch hook: the same small network, parameters and
// data (closed formulas on both sides, nothing shared through files) trained on the CPU by
// PyTorch under smdebug's hook (smdebug_pytorch_run.py) and by libtorch under torch_hook, with
// the same collections and reduction configurations. The two runs must hold the same records,
// read straight from their event files: the same tensor names at the same steps and modes, and
// for every raw value and every stored reduction (smdebug/reductions/<r>/<tensor>, all eighteen
// reductions) the same dtype, the same shape and the same values within float32 rounding. Then
// Python smdebug's own reading of both runs (dump_trial.py) must agree the same way.
//
// Skipped with a message when Python smdebug or PyTorch is missing; TDBG_REQUIRE_SMDEBUG=1 or
// TDBG_REQUIRE_TORCH=1 (CI) makes that a failure.

// libtorch first: its logging (glog) defines CHECK(condition), which Catch2's CHECK replaces
// below. Nothing after this point uses glog's.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/loss.h>
#include <torch/optim/sgd.h>

#include "tdbg/integrations/libtorch.hpp"
#undef CHECK

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tdbg/core/dtype.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using tdbg::test::shell_quote;
using tdbg::test::temp_dir;

namespace {

// ---- the job, as smdebug_pytorch_run.py runs it ---------------------------------------------

constexpr std::int64_t inputs = 4;
constexpr std::int64_t hidden = 6;
constexpr std::int64_t classes = 3;
constexpr std::int64_t batch = 8;
constexpr std::int64_t train_steps = 6;
constexpr std::int64_t eval_steps = 2;
constexpr double learning_rate = 0.1;

constexpr const char* every_reduction = "min,max,mean,std,variance,sum,prod,l1,l2,abs_min,abs_max,abs_mean,abs_std,"
                                        "abs_variance,abs_sum,abs_prod,abs_l1,abs_l2";
constexpr const char* bias_reductions = "std,variance,mean,abs_l2";
constexpr const char* relu_reductions = "mean,max,std,abs_l1";
constexpr const char* integer_reductions = "min,max,sum,prod,abs_min,abs_max,abs_sum,abs_prod";

// Element (i, j) of a parameter: weights start at 1 and 2, biases at 101 and 201.
double parameter_value(int which, std::int64_t i, std::int64_t j, std::int64_t cols) {
    return 0.1 * std::sin(static_cast<double>(which + i * cols + j));
}

double data_value(std::int64_t step, std::int64_t b, std::int64_t i) {
    return std::sin(0.7 * static_cast<double>(step * batch + b) + 0.3 * static_cast<double>(i) + 0.1);
}

std::int64_t label_value(std::int64_t step, std::int64_t b) { return (5 * b + step) % classes; }

// A float32 tensor of `rows` x `cols` (a vector when `rows` is 0) from doubles, each rounded
// to float32 as Python's torch.tensor(..., dtype=torch.float32) rounds them.
template <class F>
torch::Tensor float_tensor(std::int64_t rows, std::int64_t cols, F&& value) {
    const std::int64_t count = std::max<std::int64_t>(rows, 1) * cols;
    torch::Tensor out = torch::empty({count}, torch::kFloat);
    auto* data = out.data_ptr<float>();
    for (std::int64_t k = 0; k < count; ++k) {
        data[k] = static_cast<float>(value(k / cols, k % cols));
    }
    return rows == 0 ? out : out.reshape({rows, cols});
}

torch::Tensor matrix(int which, std::int64_t rows, std::int64_t cols) {
    return float_tensor(rows, cols, [&](std::int64_t i, std::int64_t j) { return parameter_value(which, i, j, cols); });
}

torch::Tensor bias(int which, std::int64_t size) {
    return float_tensor(0, size, [&](std::int64_t, std::int64_t j) { return parameter_value(which, 0, j, size); });
}

struct net_impl : torch::nn::Module {
    net_impl()
        : fc1(register_module("fc1", torch::nn::Linear(inputs, hidden))),
          act(register_module("act", torch::nn::ReLU())),
          fc2(register_module("fc2", torch::nn::Linear(hidden, classes))) {}

    torch::nn::Linear fc1;
    torch::nn::ReLU act;
    torch::nn::Linear fc2;
};

tdbg::collection collection_with(const std::string& name, const char* reductions, bool save_raw_tensor,
                                 const char* include = nullptr) {
    tdbg::collection c(name);
    if (include != nullptr) {
        c.include(include);
    }
    c.set_reduction_config(tdbg::reduction_config::parse(reductions, save_raw_tensor));
    return c;
}

// The C++ side: the script's job with libtorch and torch_hook, call for call.
void train_with_torch_hook(const fs::path& out) {
    torch::set_num_threads(1);
    tdbg::hook_options options;
    options.out_dir = out.string();
    options.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    options.include_collections = {"weights", "biases", "gradients", "losses", "relu_activations", "labels"};
    options.collections = {collection_with("weights", every_reduction, true),
                           collection_with("gradients", every_reduction, false),
                           collection_with("biases", bias_reductions, true),
                           collection_with("relu_activations", relu_reductions, false, "^act_output_"),
                           collection_with("labels", integer_reductions, true, "^labels_output_")};

    auto net = std::make_shared<net_impl>();
    {
        const torch::NoGradGuard no_grad;
        net->fc1->weight.copy_(matrix(1, hidden, inputs));
        net->fc1->bias.copy_(bias(101, hidden));
        net->fc2->weight.copy_(matrix(2, classes, hidden));
        net->fc2->bias.copy_(bias(201, classes));
    }
    torch::nn::CrossEntropyLoss criterion;
    torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(learning_rate));

    tdbg::hook hook(options);
    tdbg::torch_hook torch_hook(hook);
    torch_hook.register_module(*net, "Net");
    const auto forward = [&](std::int64_t step) {
        torch_hook.begin_step();
        const torch::Tensor x =
            float_tensor(batch, inputs, [&](std::int64_t b, std::int64_t i) { return data_value(step, b, i); });
        torch::Tensor y = torch::empty({batch}, torch::kLong);
        for (std::int64_t b = 0; b < batch; ++b) {
            y[b] = label_value(step, b);
        }
        const torch::Tensor a = net->act(net->fc1(x));
        torch_hook.save_output(*net->act, a);
        torch::Tensor loss = criterion(net->fc2(a), y);
        torch_hook.record_loss(*criterion, loss);
        torch_hook.record_tensor_value("labels", (y + 1).to(torch::kInt));
        return loss;
    };
    hook.set_mode(tdbg::mode::train);
    for (std::int64_t step = 0; step < train_steps; ++step) {
        optimizer.zero_grad();
        const torch::Tensor loss = forward(step);
        loss.backward();
        torch_hook.after_backward();
        optimizer.step();
    }
    hook.set_mode(tdbg::mode::eval);
    const torch::NoGradGuard no_grad;
    for (std::int64_t step = 0; step < eval_steps; ++step) {
        (void)forward(train_steps + step);
    }
    hook.close();
}

// ---- the records of a run ---------------------------------------------------------------

struct record {
    std::string worker;
    std::optional<tdbg::mode> mode;
    std::optional<std::int64_t> mode_step;
    tdbg::tensor_value value;
};

using record_map = std::map<std::pair<std::int64_t, std::string>, record>;

// One difference between the runs: what kind (grouped in the report) and the whole story.
struct problem {
    std::string kind;
    std::string text;
};

// Every tensor record of every event file of `run`, by (global step, tensor name). A record
// written twice for one step and name is a problem of its own.
record_map read_records(const fs::path& run, std::vector<problem>& problems) {
    const tdbg::local_storage storage(run);
    record_map out;
    for (const std::string& key : storage.list("events/")) {
        const auto info = tdbg::format::parse_event_file_key(key);
        if (!info) {
            continue;
        }
        const std::string data = storage.read(key);
        tdbg::format::record_reader reader(data, key);
        while (const auto rec = reader.next()) {
            auto ev = tdbg::format::decode_tensor_event(rec->payload, nullptr, key, rec->payload_offset());
            record r{info->worker, ev.mode, ev.mode_step, std::move(ev.value)};
            if (!out.emplace(std::make_pair(ev.step, ev.tag), std::move(r)).second) {
                problems.push_back({"a record written twice", fmt::format("{}: step {} holds '{}' twice",
                                                                          run.filename().string(), ev.step, ev.tag)});
            }
        }
    }
    return out;
}

std::string shape_text(const tdbg::tensor_value::shape_type& shape) {
    std::string out = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        out += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    }
    return out + ")";
}

// The elements of a real tensor as doubles; nullopt for other dtypes (none in this job).
std::optional<std::vector<double>> elements(const tdbg::tensor_value& v) {
    return tdbg::visit_dtype(v.type(), [&](auto tag) -> std::optional<std::vector<double>> {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_arithmetic_v<T> || tdbg::is_half_element_v<T>) {
            std::vector<double> out;
            const T* data = v.data_as<T>();
            for (std::size_t i = 0; i < v.size(); ++i) {
                out.push_back(tdbg::as_double(data[i]));
            }
            return out;
        } else {
            return std::nullopt;
        }
    });
}

std::string value_text(const tdbg::tensor_value& v) {
    const auto e = elements(v);
    if (!e) {
        return "<" + std::string(tdbg::dtype_name(v.type())) + ">";
    }
    std::string out = "[";
    for (std::size_t i = 0; i < e->size() && i < 6; ++i) {
        out += fmt::format("{}{:.9g}", i == 0 ? "" : ", ", (*e)[i]);
    }
    return out + (e->size() > 6 ? ", ...]" : "]");
}

std::string record_text(const record& r) {
    return fmt::format("{} {} {}", tdbg::dtype_name(r.value.type()), shape_text(r.value.shape()), value_text(r.value));
}

// How close two floating-point numbers must be: |python - tdbg| <= absolute + relative * |python|.
struct tolerance {
    double absolute = 0;
    double relative = 0;
};

// A raw value is the same float32 arithmetic on both sides (libtorch's kernels): within 1e-6.
constexpr tolerance raw_tolerance{1e-6, 0};
constexpr double reduction_rtol = 1e-5;

// A stored reduction may be computed another way (float64 sums, other orders): within 1e-5 of
// its value; values below float32's normal range (a product of small gradients) are all alike.
// A mean or a sum whose terms cancel (a gradient summing to zero) is as exact as the terms'
// magnitudes make it: within 1e-5 of `magnitude`, the mean or sum of the absolute values.
tolerance reduction_tolerance(tdbg::reduction r, std::optional<double> magnitude) {
    tolerance t{static_cast<double>(std::numeric_limits<float>::min()), reduction_rtol};
    const bool cancels = !r.abs && (r.kind == tdbg::reduction_kind::mean || r.kind == tdbg::reduction_kind::sum);
    if (cancels && magnitude) {
        t.absolute = std::max(t.absolute, reduction_rtol * *magnitude);
    }
    return t;
}

bool close_enough(double python, double ours, tolerance t) {
    if (std::isnan(python) || std::isnan(ours)) {
        return std::isnan(python) && std::isnan(ours);
    }
    if (std::isinf(python) || std::isinf(ours)) {
        return python == ours;
    }
    return std::abs(python - ours) <= t.absolute + t.relative * std::abs(python);
}

// What differs between the two records of one name and step (nothing when they agree).
std::vector<std::string> record_difference(const record& python, const record& ours, tolerance t) {
    std::vector<std::string> what;
    if (python.mode != ours.mode || python.mode_step != ours.mode_step) {
        what.emplace_back("mode");
    }
    if (python.worker != ours.worker) {
        what.emplace_back("worker");
    }
    if (python.value.type() != ours.value.type()) {
        what.emplace_back("dtype");
    }
    if (python.value.shape() != ours.value.shape()) {
        what.emplace_back("shape");
    }
    const auto a = elements(python.value);
    const auto b = elements(ours.value);
    if (!a || !b || a->size() != b->size()) {
        what.emplace_back("values (not comparable)");
    } else {
        const bool exact = tdbg::is_integer(python.value.type()) && tdbg::is_integer(ours.value.type());
        std::size_t worst = a->size();
        double worst_diff = 0;
        for (std::size_t i = 0; i < a->size(); ++i) {
            const double x = (*a)[i];
            const double y = (*b)[i];
            const bool same = exact ? x == y : close_enough(x, y, t);
            if (!same && (worst == a->size() || std::abs(x - y) > worst_diff)) {
                worst = i;
                worst_diff = std::abs(x - y);
            }
        }
        if (worst != a->size()) {
            what.push_back(fmt::format("value (element {}: {:.9g} against {:.9g})", worst, (*a)[worst], (*b)[worst]));
        }
    }
    return what;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out;
}

// "reduction std" or "raw value": what a record is, whichever tensor it belongs to.
std::string record_kind(const std::string& name) {
    if (const auto parsed = tdbg::format::parse_reduction_tensor_name(name)) {
        return "reduction " + tdbg::reduction_name(parsed->first);
    }
    return "raw value";
}

// "reduction std of gradient/Net_fc2.bias" or "raw Net_fc1.weight".
std::string describe(const std::string& name) {
    if (const auto parsed = tdbg::format::parse_reduction_tensor_name(name)) {
        return fmt::format("reduction {} of {} ({})", tdbg::reduction_name(parsed->first), parsed->second, name);
    }
    return "raw " + name;
}

// The mean or the sum of the absolute values of `tensor` at `step` in the Python run: its stored
// abs_mean or abs_sum, or from its raw value; nullopt when the run holds neither.
std::optional<double> magnitude(const record_map& python, std::int64_t step, const std::string& tensor,
                                tdbg::reduction_kind kind) {
    const auto stored = python.find({step, tdbg::format::reduction_tensor_name({kind, true}, tensor)});
    if (stored != python.end()) {
        return elements(stored->second.value).value().at(0);
    }
    const auto raw = python.find({step, tensor});
    if (raw == python.end()) {
        return std::nullopt;
    }
    const auto values = elements(raw->second.value).value();
    double sum = 0;
    for (const double v : values) {
        sum += std::abs(v);
    }
    return kind == tdbg::reduction_kind::sum || values.empty() ? sum : sum / static_cast<double>(values.size());
}

tolerance record_tolerance(const record_map& python, std::int64_t step, const std::string& name) {
    const auto parsed = tdbg::format::parse_reduction_tensor_name(name);
    if (!parsed) {
        return raw_tolerance;
    }
    return reduction_tolerance(parsed->first, magnitude(python, step, parsed->second, parsed->first.kind));
}

std::string mode_text(const record& r) {
    return fmt::format("{} {}", r.mode ? tdbg::mode_name(*r.mode) : "no mode", r.mode_step.value_or(-1));
}

// The tdbg run's records against the Python run's: appends what differs to `problems` and
// returns the number of records compared.
std::size_t compare_records(const record_map& python, const record_map& ours, std::vector<problem>& problems) {
    std::size_t compared = 0;
    for (const auto& [key, theirs] : python) {
        const auto& [step, name] = key;
        const auto mine = ours.find(key);
        if (mine == ours.end()) {
            problems.push_back({record_kind(name) + " only in the Python run",
                                fmt::format("step {} ({}): {} only in the Python run: {}", step, mode_text(theirs),
                                            describe(name), record_text(theirs))});
            continue;
        }
        ++compared;
        const auto what = record_difference(theirs, mine->second, record_tolerance(python, step, name));
        if (!what.empty()) {
            std::vector<std::string> differ;
            differ.reserve(what.size());
            for (const auto& w : what) {
                differ.push_back(w.substr(0, w.find(' ')));
            }
            std::string text =
                fmt::format("step {} ({}): {}: {} differ: Python {}; tdbg {}", step, mode_text(theirs), describe(name),
                            joined(what), record_text(theirs), record_text(mine->second));
            if (theirs.mode != mine->second.mode || theirs.mode_step != mine->second.mode_step) {
                text += fmt::format(" (tdbg's mode: {})", mode_text(mine->second));
            }
            if (theirs.worker != mine->second.worker) {
                text += fmt::format(" (workers: Python {}, tdbg {})", theirs.worker, mine->second.worker);
            }
            problems.push_back({fmt::format("{} of a {}", joined(differ), record_kind(name)), std::move(text)});
        }
    }
    for (const auto& [key, mine] : ours) {
        if (python.count(key) == 0) {
            problems.push_back({record_kind(key.second) + " only in the tdbg run",
                                fmt::format("step {} ({}): {} only in the tdbg run: {}", key.first, mode_text(mine),
                                            describe(key.second), record_text(mine))});
        }
    }
    return compared;
}

// ---- Python smdebug's reading of a run (dump_trial.py) -------------------------------------

// A number of dump_trial's document ("nan", "inf", "-inf" are strings there).
std::optional<double> json_number(const json& j) {
    if (j.is_number()) {
        return j.get<double>();
    }
    if (j.is_string()) {
        const auto s = j.get<std::string>();
        if (s == "nan") {
            return std::nan("");
        }
        if (s == "inf" || s == "-inf") {
            return s == "inf" ? HUGE_VAL : -HUGE_VAL;
        }
    }
    return std::nullopt;
}

// Compares two dump_trial documents: numbers (integers exactly) within `t`, everything else
// exactly; the raw bytes' hashes (sha256, float rounding decides them) and the run's own name
// are left out. Below an entry's "reductions", each reduction has its own tolerance.
void compare_json(const json& python, const json& ours, const std::string& path, tolerance t,
                  std::vector<problem>& problems);

// A difference at `path` of a dump_trial document, its kind the path without the tensor's name
// and the entry's index ("/tensors/<name>/entries[3]/reductions/std/shape" is
// ".../entries/reductions/std/shape").
problem json_problem(const std::string& path, const std::string& text) {
    std::string kind = path;
    if (path.rfind("/tensors/", 0) == 0) {
        const auto entry = path.find("/entries[");
        const auto end = entry == std::string::npos ? std::string::npos : path.find(']', entry);
        kind = end == std::string::npos ? "/tensors/<name>" : ".../entries" + path.substr(end + 1);
    }
    return {kind, path + ": " + text};
}

// An entry's reductions ({"std": {"value": ..., "dtype": ..., "shape": ...}, ...}); the
// magnitudes of its mean and sum are the Python reading's abs_mean and abs_sum, when it has them.
void compare_reductions(const json& python, const json& ours, const std::string& path, std::vector<problem>& problems) {
    const auto magnitude_of = [&](const char* key) -> std::optional<double> {
        if (python.contains(key) && python.at(key).contains("value")) {
            return json_number(python.at(key).at("value"));
        }
        return std::nullopt;
    };
    for (const auto& [key, value] : python.items()) {
        if (!ours.contains(key)) {
            problems.push_back(json_problem(fmt::format("{}/{}", path, key),
                                            fmt::format("only in Python's reading: {}", value.dump())));
            continue;
        }
        const auto r = tdbg::parse_reduction(key);
        if (!r) {
            problems.push_back(json_problem(fmt::format("{}/{}", path, key), "not a reduction tdbg knows"));
            continue;
        }
        const auto magnitude =
            r->kind == tdbg::reduction_kind::sum ? magnitude_of("abs_sum") : magnitude_of("abs_mean");
        compare_json(value, ours.at(key), fmt::format("{}/{}", path, key), reduction_tolerance(*r, magnitude),
                     problems);
    }
    for (const auto& [key, value] : ours.items()) {
        if (!python.contains(key)) {
            problems.push_back(json_problem(fmt::format("{}/{}", path, key),
                                            fmt::format("only in tdbg's run's reading: {}", value.dump())));
        }
    }
}

void compare_json(const json& python, const json& ours, const std::string& path, tolerance t,
                  std::vector<problem>& problems) {
    const auto a = json_number(python);
    const auto b = json_number(ours);
    if (a && b && (python.is_number_float() || ours.is_number_float() || python.is_string())) {
        if (!close_enough(*a, *b, t)) {
            problems.push_back(json_problem(path, fmt::format("Python {:.9g}, tdbg {:.9g}", *a, *b)));
        }
        return;
    }
    if (python.is_object() && ours.is_object()) {
        for (const auto& [key, value] : python.items()) {
            if (key == "sha256" || key == "trial_name" || key == "producer") {
                continue;
            }
            if (!ours.contains(key)) {
                problems.push_back(json_problem(fmt::format("{}/{}", path, key),
                                                fmt::format("only in Python's reading: {}", value.dump())));
            } else if (key == "reductions" && value.is_object()) {
                compare_reductions(value, ours.at(key), fmt::format("{}/{}", path, key), problems);
            } else {
                compare_json(value, ours.at(key), fmt::format("{}/{}", path, key), t, problems);
            }
        }
        for (const auto& [key, value] : ours.items()) {
            if (!python.contains(key)) {
                problems.push_back(json_problem(fmt::format("{}/{}", path, key),
                                                fmt::format("only in tdbg's run's reading: {}", value.dump())));
            }
        }
        return;
    }
    if (python.is_array() && ours.is_array() && python.size() == ours.size()) {
        for (std::size_t i = 0; i < python.size(); ++i) {
            compare_json(python[i], ours[i], fmt::format("{}[{}]", path, i), t, problems);
        }
        return;
    }
    if (python != ours) {
        problems.push_back(json_problem(path, fmt::format("Python {}, tdbg {}", python.dump(), ours.dump())));
    }
}

// ---- running Python ------------------------------------------------------------------

bool required() {
    for (const char* name : {"TDBG_REQUIRE_SMDEBUG", "TDBG_REQUIRE_TORCH"}) {
        const char* env = std::getenv(name);
        if (env != nullptr && std::string(env) == "1") {
            return true;
        }
    }
    return false;
}

fs::path smdebug_tools() {
    const char* env = std::getenv("TDBG_SHARED_DIR");
    return fs::path(env != nullptr ? env : TDBG_SHARED_DIR) / "tools" / "smdebug";
}

std::string python_command(const std::string& script, const std::vector<std::string>& args) {
    std::string command = "SMDEBUG_SRC=" + shell_quote(TDBG_SMDEBUG_SRC) +
                          " TDBG_SMDEBUG_TOOLS=" + shell_quote(smdebug_tools().string()) + " " +
                          shell_quote(TDBG_PYTHON3) + " " + shell_quote(script);
    for (const auto& a : args) {
        command += " " + shell_quote(a);
    }
    return command;
}

// The problems grouped by kind: how many of each, with the first as an example.
std::string problem_report(const std::vector<problem>& problems) {
    std::vector<std::string> kinds; // in order of first appearance
    std::map<std::string, std::pair<std::size_t, std::string>> by_kind;
    for (const problem& p : problems) {
        auto [it, fresh] = by_kind.try_emplace(p.kind, 0, p.text);
        if (fresh) {
            kinds.push_back(p.kind);
        }
        ++it->second.first;
    }
    std::ostringstream out;
    out << problems.size() << " difference(s) of " << kinds.size() << " kind(s)";
    for (const auto& kind : kinds) {
        const auto& [count, example] = by_kind.at(kind);
        out << "\n- " << kind << ": " << count << ", e.g. " << example;
    }
    return out.str();
}

} // namespace

TEST_CASE("torch_hook writes the records smdebug's PyTorch hook writes: names, steps, dtypes, shapes, values") {
    temp_dir dir("libtorch_smdebug");
    const fs::path python_run = dir.path() / "python_run";
    const fs::path tdbg_run = dir.path() / "tdbg_run";

    const auto python = tdbg::test::run_shell(python_command(TDBG_SMDEBUG_RUN_SCRIPT, {python_run.string()}));
    if (python.status == 77) {
        // The script's reason, without its "SKIPPED: ", which would make ctest count a failure as a skip.
        std::string why = python.out.substr(0, python.out.find_last_not_of('\n') + 1);
        constexpr std::string_view skipped = "SKIPPED: ";
        if (why.rfind(skipped, 0) == 0) {
            why.erase(0, skipped.size());
        }
        if (required()) {
            FAIL(why << " (TDBG_REQUIRE_SMDEBUG or TDBG_REQUIRE_TORCH is 1)");
        }
        TDBG_SKIP(why);
    }
    {
        INFO("smdebug_pytorch_run.py: " << python.out << python.err);
        REQUIRE(python.status == 0);
    }
    train_with_torch_hook(tdbg_run);

    std::vector<problem> problems;
    const auto theirs = read_records(python_run, problems);
    const auto ours = read_records(tdbg_run, problems);

    // What the comparison covers, so that it cannot pass on less: eight steps, and at step 0
    // every one of the eighteen reductions of the three-element bias's gradient, the raw
    // weights, and an int32 tensor's integer reductions. A TRAIN step holds 134 records: 6 raw
    // (4 parameters, the loss, the labels), 18 reductions of each weight, 4 of each bias, 18 of
    // each of the 4 gradients, 4 of the ReLU's output and 8 of the labels; an EVAL step the 62
    // without gradients.
    std::set<std::int64_t> steps;
    for (const auto& entry : theirs) {
        steps.insert(entry.first.first);
    }
    CHECK(steps == std::set<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    for (const auto& r : tdbg::parse_reduction_list(every_reduction)) {
        INFO(tdbg::reduction_name(r));
        CHECK(theirs.count({0, tdbg::format::reduction_tensor_name(r, "gradient/Net_fc2.bias")}) == 1);
    }
    REQUIRE(theirs.count({0, "Net_fc1.weight"}) == 1);
    CHECK(theirs.at({0, "Net_fc1.weight"}).value.shape() == tdbg::tensor_value::shape_type{hidden, inputs});
    REQUIRE(theirs.count({0, "smdebug/reductions/sum/labels_output_0"}) == 1);
    CHECK(theirs.at({0, "labels_output_0"}).value.type() == tdbg::dtype::int32);
    CHECK(theirs.size() == train_steps * 134 + eval_steps * 62);

    {
        const std::size_t compared = compare_records(theirs, ours, problems);
        INFO("The tdbg run's records against the Python run's (" << compared << " compared of " << theirs.size()
                                                                 << " in the Python run, " << ours.size()
                                                                 << " in the tdbg run): " << problem_report(problems));
        CHECK(problems.empty());
    }

    // Python smdebug's reading of the two runs agrees too: names, steps, modes, collections,
    // and for every tensor and step its value, dtype, shape and every reduction (stored or
    // computed by smdebug from the raw value) with its dtype and shape.
    // (The two readings run side by side: each is mostly Python's start and smdebug's import.)
    const fs::path dump = smdebug_tools() / "dump_trial.py";
    auto reading = [&](const fs::path& run) {
        return std::async(std::launch::async, [command = python_command(dump.string(), {run.string()})] {
            return tdbg::test::run_shell(command);
        });
    };
    auto python_future = reading(python_run);
    auto ours_future = reading(tdbg_run);
    const auto read_python = python_future.get();
    const auto read_ours = ours_future.get();
    {
        INFO("dump_trial.py of the Python run: " << read_python.err);
        REQUIRE(read_python.status == 0);
    }
    {
        INFO("dump_trial.py of the tdbg run: " << read_ours.err);
        REQUIRE(read_ours.status == 0);
    }
    const json python_reading = json::parse(read_python.out);
    const json our_reading = json::parse(read_ours.out);
    REQUIRE(python_reading.at("tensors").size() == 11);
    std::vector<problem> reading_problems;
    compare_json(python_reading, our_reading, "", raw_tolerance, reading_problems);
    INFO("Python smdebug's reading of the tdbg run against its reading of the Python run: "
         << problem_report(reading_problems));
    CHECK(reading_problems.empty());
}
