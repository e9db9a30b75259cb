// What tdbg's torch_hook costs a libtorch training loop, on the CPU or a CUDA device, and
// beside it (--python) what Python smdebug's PyTorch hook costs the same loop in PyTorch.
//
// The model: L blocks of Linear(W, W) + ReLU, registered as class "MLP", MSE or cross-entropy
// loss, SGD, one fixed batch of B random rows on the device; or (--model mnist) the conv net of
// pytorch/examples' cpp/mnist, registered as class "Net": conv 1->10 k5, conv 10->20 k5, dropout,
// fc 320->50, fc 50->10, log-softmax and NLL loss, SGD with momentum, a batch of B synthetic
// 28x28 images drawn anew every step (as a data loader hands a new batch). Three phases, each measured
// against the same loop without a hook in the same run:
//  1. nothing selected: a hook that includes no collection (torch_hook registered and called);
//  2. reductions every step: collections weights and gradients, min, max, mean, std, l2_norm
//     and abs_mean, no raw values;
//  3. raw values every 10th step: weights and gradients.
// Each phase alternates blocks of --steps steps, hook off and hook on (the order flips every
// pair, so neither always runs first), after --warmup steps of each loop that are not counted.
// Every step ends with a device synchronize on cuda. A hook-on block ends with the step
// published and the writer flushed (hook::end_step, hook::flush), inside its time: a block pays
// for what it saved. Printed: ms per step, the ratio on/off (median over the pairs, and their
// spread), the same ratio of the process's CPU time (every thread: less moved than wall time by
// other jobs on a shared machine), the host time inside torch_hook's calls (begin_step,
// after_backward), the bytes written per saved step, and for phase 3 the time each saved step
// adds (on block - off block, per saved step) against writing the same bytes into a new file in
// the same directory with write() and close() (no fsync on either side: the hook does not
// fsync), timed after each hook-on block.
//
//   bench_libtorch [--device cpu|cuda] [--model mlp|mnist] [--layers L] [--width W] [--batch B] [--loss mse|ce]
//                  [--steps N] [--warmup N] [--blocks N] [--threads N] [--phases LIST]
//                  [--reducer automatic|torch_ops] [--force-device-path]
//                  [--python] [--python-exe PATH] [--dir DIR] [--keep] [--json FILE]
//
// --python runs benchmarks/bench_libtorch_smdebug.py with the same arguments (Python smdebug
// from $SMDEBUG_SRC, else setup.sh's default copy, <temp dir>/sagemaker-debugger) and prints
// its ratios beside tdbg's; it is skipped with a message when Python torch or smdebug do not
// import. Build it Release (see README.md).

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>
#include <torch/version.h>

#include "shared_dir.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/integrations/libtorch.hpp"


namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;
using tdbg::format::json_value;

constexpr int raw_save_interval = 10;
constexpr int skipped_status = 77; // bench_libtorch_smdebug.py: torch or smdebug missing
constexpr std::string_view reductions_list = "min,max,mean,std,l2_norm,abs_mean";

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double cpu_seconds(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// CPU seconds of the whole process: the training thread, torch's threads, the hook's writer threads.
double process_cpu_seconds() { return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID); }

// CPU seconds of the calling thread.
double thread_cpu_seconds() { return cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }

double median(std::vector<double> values) {
    if (values.empty()) {
        return 0.0;
    }
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// ---- arguments -------------------------------------------------------------------------

struct arguments {
    std::string device = "cpu";
    std::string model = "mlp";
    std::int64_t layers = 4;
    std::int64_t width = 1024;
    std::int64_t batch = 64;
    std::string loss = "mse";
    int steps = 10;
    int warmup = 3;
    int blocks = 5;
    int threads = 0; // 0: torch's default
    std::vector<std::string> phases{"nothing", "reductions", "raw"};
    tdbg::device_reducer reducer = tdbg::device_reducer::automatic;
    bool force_device_path = false;
    bool python = false;
    std::string python_exe;
    fs::path dir;
    bool keep = false;
    std::string json;
};

constexpr const char* usage_text =
    "usage: bench_libtorch [options]\n"
    "  --device cpu|cuda      where the model trains (default cpu; cuda fails without a GPU)\n"
    "  --model mlp|mnist      the MLP below, or pytorch/examples' MNIST conv net on synthetic\n"
    "                         28x28 images (--layers, --width and --loss do not apply)\n"
    "  --layers L             Linear(W, W) + ReLU blocks (default 4)\n"
    "  --width W              (default 1024)\n"
    "  --batch B              (default 64)\n"
    "  --loss mse|ce          MSE against random targets, or cross-entropy over W classes (default mse)\n"
    "  --steps N              steps per block (default 10; a multiple of 10 gives every raw block\n"
    "                         the same number of saved steps)\n"
    "  --warmup N             steps of each loop before the blocks, not counted (default 3)\n"
    "  --blocks N             blocks of each loop per phase (default 5)\n"
    "  --threads N            torch's intra-op threads (default: torch's own choice)\n"
    "  --phases LIST          some of nothing,reductions,raw (default all three)\n"
    "  --reducer automatic|torch_ops   torch_hook_options::reducer (default automatic)\n"
    "  --force-device-path    torch_hook_options::force_device_path: CPU tensors take the device path\n"
    "  --python               also run bench_libtorch_smdebug.py (Python smdebug) and print it beside\n"
    "  --python-exe PATH      the Python that runs it (default $TDBG_PYTHON, else /usr/bin/python3)\n"
    "  --dir DIR              where the runs go (default <temp dir>/tdbg_bench_libtorch_<pid>)\n"
    "  --keep                 keep the runs (their event files are emptied as they are counted)\n"
    "  --json FILE            also write the figures as JSON\n";

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

long long number_argument(const std::string& name, const std::string& text, long long least) {
    std::size_t used = 0;
    long long value = 0;
    try {
        value = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || value < least) {
        throw usage_error(name + " expects a whole number >= " + std::to_string(least) + ", not '" + text + "'");
    }
    return value;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::istringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        if (!item.empty()) {
            items.push_back(item);
        }
    }
    return items;
}

arguments parse_arguments(int argc, char** argv) {
    arguments a;
    const std::vector<std::string> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        const auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) {
                throw usage_error(arg + " expects a value");
            }
            return args[++i];
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage_text, stdout);
            std::exit(0);
        } else if (arg == "--device") {
            a.device = value();
            if (a.device != "cpu" && a.device != "cuda") {
                throw usage_error("--device is cpu or cuda, not '" + a.device + "'");
            }
        } else if (arg == "--model") {
            a.model = value();
            if (a.model != "mlp" && a.model != "mnist") {
                throw usage_error("--model is mlp or mnist, not '" + a.model + "'");
            }
        } else if (arg == "--layers") {
            a.layers = number_argument(arg, value(), 1);
        } else if (arg == "--width") {
            a.width = number_argument(arg, value(), 1);
        } else if (arg == "--batch") {
            a.batch = number_argument(arg, value(), 1);
        } else if (arg == "--loss") {
            a.loss = value();
            if (a.loss != "mse" && a.loss != "ce") {
                throw usage_error("--loss is mse or ce, not '" + a.loss + "'");
            }
        } else if (arg == "--steps") {
            a.steps = static_cast<int>(number_argument(arg, value(), 1));
        } else if (arg == "--warmup") {
            a.warmup = static_cast<int>(number_argument(arg, value(), 0));
        } else if (arg == "--blocks") {
            a.blocks = static_cast<int>(number_argument(arg, value(), 1));
        } else if (arg == "--threads") {
            a.threads = static_cast<int>(number_argument(arg, value(), 1));
        } else if (arg == "--phases") {
            a.phases = split_list(value());
            for (const auto& p : a.phases) {
                if (p != "nothing" && p != "reductions" && p != "raw") {
                    throw usage_error("--phases takes nothing, reductions and raw, not '" + p + "'");
                }
            }
            if (a.phases.empty()) {
                throw usage_error("--phases names no phase");
            }
        } else if (arg == "--reducer") {
            const std::string& r = value();
            if (r == "automatic") {
                a.reducer = tdbg::device_reducer::automatic;
            } else if (r == "torch_ops") {
                a.reducer = tdbg::device_reducer::torch_ops;
            } else {
                throw usage_error("--reducer is automatic or torch_ops, not '" + r + "'");
            }
        } else if (arg == "--force-device-path") {
            a.force_device_path = true;
        } else if (arg == "--python") {
            a.python = true;
        } else if (arg == "--python-exe") {
            a.python_exe = value();
        } else if (arg == "--dir") {
            a.dir = value();
        } else if (arg == "--keep") {
            a.keep = true;
        } else if (arg == "--json") {
            a.json = value();
        } else {
            throw usage_error("unknown argument '" + arg + "'");
        }
    }
    if (a.python && a.model != "mlp") {
        throw usage_error("--python runs the MLP only (bench_libtorch_smdebug.py has no --model)");
    }
    if (a.dir.empty()) {
        a.dir = fs::temp_directory_path() / ("tdbg_bench_libtorch_" + std::to_string(getpid()));
    }
    return a;
}

const char* reducer_name(tdbg::device_reducer r) {
    return r == tdbg::device_reducer::torch_ops ? "torch_ops" : "automatic";
}

constexpr bool cuda_component_built() {
#if defined(TDBG_HAS_CUDA) && TDBG_HAS_CUDA
    return true;
#else
    return false;
#endif
}

// True when torch_hook reduces CUDA tensors with tdbg::cuda's kernel: the component is built
// and libtorch has CUDA (TDBG_TORCH_HAS_CUDA, which CMake sets on tdbg::libtorch then).
constexpr bool fused_kernel_used() {
#if defined(TDBG_TORCH_HAS_CUDA) && TDBG_TORCH_HAS_CUDA
    return cuda_component_built();
#else
    return false;
#endif
}

// The path reductions of the saved tensors take, as torch_hook_options describe it.
std::string reduction_path(const arguments& a) {
    if (a.device == "cpu" && !a.force_device_path) {
        return "CPU tensors: the host path";
    }
    const std::string forced = a.device == "cpu" ? "CPU tensors through the device path (forced), " : "";
    if (a.device == "cuda" && a.reducer == tdbg::device_reducer::automatic && fused_kernel_used()) {
        return forced + "the fused kernel of tdbg::cuda";
    }
    return forced + "torch operations on the tensor's device";
}

// ---- the model and its loop ------------------------------------------------------------

/// A model the trainer runs: its forward pass and the class name the hook registers it under.
struct bench_model : torch::nn::Module {
    virtual torch::Tensor forward(torch::Tensor x) = 0;
    [[nodiscard]] virtual const char* class_name() const = 0;
};

struct mlp_impl : bench_model {
    mlp_impl(std::int64_t layers, std::int64_t width) {
        for (std::int64_t i = 0; i < layers; ++i) {
            fc.emplace_back(register_module("fc" + std::to_string(i), torch::nn::Linear(width, width)));
        }
    }
    torch::Tensor forward(torch::Tensor x) override {
        for (auto& layer : fc) {
            x = torch::relu(layer->forward(x));
        }
        return x;
    }
    [[nodiscard]] const char* class_name() const override { return "MLP"; }
    std::vector<torch::nn::Linear> fc;
};

// The net of pytorch/examples' cpp/mnist, written anew: log-probabilities of 10 classes.
struct mnist_net : bench_model {
    mnist_net()
        : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 10, 5)))),
          conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(10, 20, 5)))),
          conv2_drop(register_module("conv2_drop", torch::nn::Dropout2d())),
          fc1(register_module("fc1", torch::nn::Linear(320, 50))),
          fc2(register_module("fc2", torch::nn::Linear(50, 10))) {}
    torch::Tensor forward(torch::Tensor x) override {
        x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
        x = torch::relu(torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
        x = torch::relu(fc1->forward(x.view({-1, 320})));
        x = torch::dropout(x, 0.5, is_training());
        return torch::log_softmax(fc2->forward(x), 1);
    }
    [[nodiscard]] const char* class_name() const override { return "Net"; }
    torch::nn::Conv2d conv1;
    torch::nn::Conv2d conv2;
    torch::nn::Dropout2d conv2_drop;
    torch::nn::Linear fc1;
    torch::nn::Linear fc2;
};

std::shared_ptr<bench_model> make_model(const arguments& a) {
    if (a.model == "mnist") {
        return std::make_shared<mnist_net>();
    }
    return std::make_shared<mlp_impl>(a.layers, a.width);
}

class trainer {
public:
    explicit trainer(const arguments& a)
        : cuda_(a.device == "cuda"), mnist_(a.model == "mnist"), cross_entropy_(a.loss == "ce"),
          model_(make_model(a)),
          optimizer_(model_->parameters(), torch::optim::SGDOptions(mnist_ ? 0.01 : 1e-4).momentum(mnist_ ? 0.5 : 0.0)) {
        const torch::Device device = cuda_ ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
        model_->to(device);
        const auto options = torch::TensorOptions().device(device);
        if (mnist_) {
            x_ = torch::rand({a.batch, 1, 28, 28}, options);
            target_ = torch::randint(10, {a.batch}, options.dtype(torch::kLong));
        } else {
            x_ = torch::randn({a.batch, a.width}, options);
            target_ = cross_entropy_ ? torch::randint(a.width, {a.batch}, options.dtype(torch::kLong))
                                     : torch::randn({a.batch, a.width}, options);
        }
    }

    [[nodiscard]] const bench_model& model() const { return *model_; }

    /// One training step; the wall and CPU seconds inside torch_hook's calls are added to
    /// `in_hook` and `in_hook_cpu`.
    void step(tdbg::torch_hook* hook, double& in_hook, double& in_hook_cpu) {
        if (hook != nullptr) {
            const auto t0 = clock_type::now();
            const double c0 = thread_cpu_seconds();
            hook->begin_step();
            in_hook += seconds_since(t0);
            in_hook_cpu += thread_cpu_seconds() - c0;
        }
        if (mnist_) { // a new batch every step, as from a data loader
            x_.uniform_();
            target_.random_(10);
        }
        const torch::Tensor out = model_->forward(x_);
        const torch::Tensor loss = mnist_          ? torch::nll_loss(out, target_)
                                   : cross_entropy_ ? torch::nn::functional::cross_entropy(out, target_)
                                                    : torch::mse_loss(out, target_);
        optimizer_.zero_grad();
        loss.backward();
        if (hook != nullptr) {
            const auto t0 = clock_type::now();
            const double c0 = thread_cpu_seconds();
            hook->after_backward();
            in_hook += seconds_since(t0);
            in_hook_cpu += thread_cpu_seconds() - c0;
        }
        optimizer_.step();
        if (cuda_) {
            torch::cuda::synchronize();
        }
    }

private:
    bool cuda_;
    bool mnist_;
    bool cross_entropy_;
    std::shared_ptr<bench_model> model_;
    torch::optim::SGD optimizer_;
    torch::Tensor x_;
    torch::Tensor target_;
};

struct block_time {
    double per_step = 0; ///< seconds per step, the block's end included
    double cpu = 0;      ///< process CPU seconds per step
    double in_hook = 0;  ///< seconds inside torch_hook's calls, per step
    double in_hook_cpu = 0; ///< the training thread's CPU seconds inside them, per step
    double end = 0;      ///< seconds of the block's end (end_step + flush)
};

block_time run_block(trainer& t, tdbg::hook* hook, tdbg::torch_hook* th, int steps) {
    block_time r;
    const double cpu0 = process_cpu_seconds();
    const auto t0 = clock_type::now();
    for (int s = 0; s < steps; ++s) {
        t.step(th, r.in_hook, r.in_hook_cpu);
    }
    if (hook != nullptr) {
        const auto t1 = clock_type::now();
        hook->end_step();
        hook->flush();
        r.end = seconds_since(t1);
    }
    r.per_step = seconds_since(t0) / steps;
    r.cpu = (process_cpu_seconds() - cpu0) / steps;
    r.in_hook /= steps;
    r.in_hook_cpu /= steps;
    return r;
}

// ---- the runs' files and the plain writes ------------------------------------------------

/// What a hook wrote since the last look: bytes (event and index files) and saved steps (index
/// files). Event files are emptied once counted, so that a long run fills neither the disk nor
/// the page cache; none is deleted (ext4 would bill the next files created for it).
class run_files {
public:
    explicit run_files(fs::path run) : run_(std::move(run)) {}

    std::pair<std::uint64_t, int> take() {
        std::uint64_t bytes = 0;
        int steps = 0;
        std::error_code ec;
        if (fs::exists(run_ / "events")) {
            for (const auto& e : fs::recursive_directory_iterator(run_ / "events")) {
                if (e.is_regular_file()) {
                    bytes += e.file_size();
                    fs::resize_file(e.path(), 0, ec);
                }
            }
        }
        if (fs::exists(run_ / "index")) {
            for (const auto& e : fs::recursive_directory_iterator(run_ / "index")) {
                if (e.is_regular_file() && seen_index_.insert(e.path().string()).second) {
                    bytes += e.file_size();
                    ++steps;
                }
            }
        }
        return {bytes, steps};
    }

private:
    fs::path run_;
    std::set<std::string> seen_index_;
};

/// Seconds to write `bytes` into a new file with write() and close(); the file is emptied after.
double plain_write(const fs::path& file, const std::vector<char>& bytes) {
    const auto t0 = clock_type::now();
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644); // NOLINT(cppcoreguidelines-pro-type-vararg)
    if (fd < 0) {
        throw std::runtime_error("cannot create " + file.string() + ": " + std::strerror(errno));
    }
    std::size_t done = 0;
    while (done < bytes.size()) {
        const std::size_t chunk = std::min<std::size_t>(bytes.size() - done, std::size_t{64} << 20U);
        const ssize_t n = ::write(fd, bytes.data() + done, chunk);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ::close(fd);
            throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(errno));
        }
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    const double seconds = seconds_since(t0);
    fs::resize_file(file, 0);
    return seconds;
}

// ---- phases ----------------------------------------------------------------------------------

struct phase_result {
    std::string key;
    std::string title;
    std::vector<double> off;    ///< seconds per step, per block
    std::vector<double> on;     ///< seconds per step, per block
    std::vector<double> ratios; ///< on / off, per pair
    std::vector<double> cpu_ratios; ///< on / off process CPU time, per pair
    std::vector<double> in_hook;
    std::vector<double> in_hook_cpu;
    std::vector<double> off_cpu; ///< process CPU seconds per step, per block
    std::vector<double> on_cpu;
    std::vector<double> end;
    double writer_cpu = 0; ///< the writer threads' CPU seconds per hooked step (warm-up included)
    std::uint64_t bytes = 0;
    int saved_steps = 0;
    std::vector<double> extra_per_saved; ///< raw: (on - off) block seconds per saved step
    std::vector<double> plain;           ///< raw: seconds of the plain writes
    std::size_t plain_bytes = 0;
    std::uint64_t dropped = 0;
    std::optional<std::string> write_error;

    [[nodiscard]] double bytes_per_saved_step() const {
        return saved_steps > 0 ? static_cast<double>(bytes) / saved_steps : 0.0;
    }
};

tdbg::hook_options phase_options(const std::string& key, const fs::path& run) {
    tdbg::hook_options o;
    o.out_dir = run.string();
    const std::uint64_t interval = key == "raw" ? raw_save_interval : 1;
    o.save_config = tdbg::save_config(tdbg::save_config_mode{interval, {}, 0, std::nullopt});
    if (key != "nothing") {
        o.include_collections = {"weights", "gradients"};
    }
    if (key == "reductions") {
        o.reduction_config = tdbg::reduction_config::parse(reductions_list);
    }
    return o;
}

std::string phase_title(const std::string& key) {
    if (key == "nothing") {
        return "nothing selected";
    }
    if (key == "reductions") {
        return "reductions every step";
    }
    return "raw every " + std::to_string(raw_save_interval) + "th step";
}

std::vector<char> plain_bytes_of(std::size_t size) {
    std::vector<char> bytes(size);
    std::mt19937_64 rng(5);
    for (std::size_t i = 0; i + sizeof(std::uint64_t) <= size; i += sizeof(std::uint64_t)) {
        const std::uint64_t v = rng();
        std::memcpy(bytes.data() + i, &v, sizeof v);
    }
    return bytes;
}

phase_result run_phase(const arguments& a, trainer& t, const std::string& key) {
    phase_result r;
    r.key = key;
    r.title = phase_title(key);
    const fs::path run = a.dir / key;
    tdbg::hook hook(phase_options(key, run));
    tdbg::torch_hook_options to;
    to.reducer = a.reducer;
    to.force_device_path = a.force_device_path;
    tdbg::torch_hook th(hook, to);
    th.register_module(t.model(), t.model().class_name());
    hook.set_mode(tdbg::mode::train);
    run_files files(run);
    if (a.warmup > 0) {
        (void)run_block(t, &hook, &th, a.warmup);
    }
    (void)files.take(); // the warm-up's files are not counted
    std::vector<char> bytes;
    for (int b = 0; b < a.blocks; ++b) {
        block_time off;
        block_time on;
        if (b % 2 == 0) {
            off = run_block(t, nullptr, nullptr, a.steps);
            on = run_block(t, &hook, &th, a.steps);
        } else {
            on = run_block(t, &hook, &th, a.steps);
            off = run_block(t, nullptr, nullptr, a.steps);
        }
        r.off.push_back(off.per_step);
        r.on.push_back(on.per_step);
        r.ratios.push_back(on.per_step / off.per_step);
        r.cpu_ratios.push_back(on.cpu / off.cpu);
        r.in_hook.push_back(on.in_hook);
        r.in_hook_cpu.push_back(on.in_hook_cpu);
        r.off_cpu.push_back(off.cpu);
        r.on_cpu.push_back(on.cpu);
        r.end.push_back(on.end);
        const auto [block_bytes, block_steps] = files.take();
        r.bytes += block_bytes;
        r.saved_steps += block_steps;
        if (key == "raw" && block_steps > 0) {
            r.extra_per_saved.push_back((on.per_step - off.per_step) * a.steps / block_steps);
            if (bytes.empty()) {
                bytes = plain_bytes_of(static_cast<std::size_t>(block_bytes / static_cast<std::uint64_t>(block_steps)));
            }
            r.plain.push_back(plain_write(a.dir / "plain_write.bin", bytes));
        }
        std::fprintf(stderr, "bench_libtorch: %s, block %d of %d: off %.3f ms/step, on %.3f ms/step\n", key.c_str(),
                     b + 1, a.blocks, off.per_step * 1e3, on.per_step * 1e3);
    }
    r.plain_bytes = bytes.size();
    hook.close();
    const auto [data_cpu, publisher_cpu] = hook.writer_cpu_seconds();
    r.writer_cpu = (data_cpu + publisher_cpu) / (a.warmup + a.blocks * a.steps);
    r.dropped = hook.dropped_tensors();
    r.write_error = hook.write_error();
    return r;
}

// ---- Python smdebug ----------------------------------------------------------------------

struct python_result {
    bool ran = false;
    std::string message; ///< why it did not run, or what it ran with
    json_value doc;      ///< its JSON line
};

using tdbg::bench::shared_dir;

fs::path python_script() {
#ifdef TDBG_BENCH_SOURCE_DIR
    const fs::path source = TDBG_BENCH_SOURCE_DIR;
#else
    const fs::path source = fs::current_path();
#endif
    return source / "benchmarks" / "bench_libtorch_smdebug.py";
}

std::string read_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Runs argv[0] (looked up in PATH) with stdout into `out`; stderr is the benchmark's own.
int run_process(const std::vector<std::string>& argv, const fs::path& out) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str())); // NOLINT(cppcoreguidelines-pro-type-const-cast): posix_spawn's signature
    }
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

python_result run_python(const arguments& a) {
    python_result r;
    const fs::path script = python_script();
    if (!fs::exists(script)) {
        r.message = "SKIPPED: " + script.string() + " not found";
        return r;
    }
    // smdebug from $SMDEBUG_SRC, else where setup.sh puts it by default.
    const char* src = std::getenv("SMDEBUG_SRC");
    if (src == nullptr || *src == '\0') {
        const char* tmp = std::getenv("TMPDIR");
        const fs::path earlier = fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "sagemaker-debugger";
        if (fs::exists(earlier / "smdebug")) {
            setenv("SMDEBUG_SRC", earlier.c_str(), 1);
        }
    }
    // The stand-in for pyinstrument, which smdebug imports and Debian lacks: last in sys.path.
    if (const fs::path stubs = shared_dir() / "tools" / "smdebug" / "stubs"; fs::exists(stubs)) {
        const char* fallback = std::getenv("TDBG_SMDEBUG_FALLBACK");
        std::string value = fallback != nullptr && *fallback != '\0' ? std::string(fallback) + ":" : std::string();
        setenv("TDBG_SMDEBUG_FALLBACK", (value + stubs.string()).c_str(), 1);
    }
    std::string exe = a.python_exe;
    if (exe.empty()) {
        const char* env = std::getenv("TDBG_PYTHON");
        exe = env != nullptr && *env != '\0' ? env : (fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
    }
    std::string phases;
    for (const auto& p : a.phases) {
        phases += (phases.empty() ? "" : ",") + p;
    }
    std::vector<std::string> argv{exe, script.string(), "--device", a.device, "--phases", phases};
    const std::pair<const char*, long long> numbers[] = {{"--layers", a.layers}, {"--width", a.width},
                                                         {"--batch", a.batch},   {"--steps", a.steps},
                                                         {"--warmup", a.warmup}, {"--blocks", a.blocks}};
    for (const auto& [name, number] : numbers) {
        argv.insert(argv.end(), {name, std::to_string(number)});
    }
    argv.insert(argv.end(), {"--loss", a.loss, "--dir", (a.dir / "python").string()});
    if (a.threads > 0) {
        argv.insert(argv.end(), {"--threads", std::to_string(a.threads)});
    }
    std::printf("\nrunning Python smdebug: %s %s (same arguments) ...\n", exe.c_str(), script.c_str());
    std::fflush(stdout);
    const fs::path out = a.dir / "python_out.txt";
    const int status = run_process(argv, out);
    std::string json;
    std::string skipped;
    std::istringstream lines(read_file(out));
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.front() == '{') {
            json = line;
        } else if (line.rfind("SKIPPED:", 0) == 0) {
            skipped = line;
        }
    }
    if (status == skipped_status) {
        r.message = (skipped.empty() ? "SKIPPED: Python torch or smdebug do not import" : skipped) +
                    " (set SMDEBUG_SRC: eval \"$(<shared>/tools/smdebug/setup.sh)\", WITH_TORCH=1 for python3-torch)";
        return r;
    }
    if (status != 0 || json.empty()) {
        r.message = "FAILED: bench_libtorch_smdebug.py exited with status " + std::to_string(status) +
                    " (its messages are above)";
        return r;
    }
    r.doc = tdbg::format::parse_json(json, out.string(), "bench_libtorch_smdebug.py's output");
    r.ran = true;
    return r;
}

// ---- report ---------------------------------------------------------------------------------

std::string megabytes(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f MB", bytes / 1e6);
    return text;
}

void print_phases(const std::vector<phase_result>& results) {
    std::printf("\n%-26s %10s %10s %8s %15s %8s %11s %9s %16s\n", "phase", "off ms", "on ms", "on/off",
                "spread min-max", "cpu x", "in hook ms", "end ms", "bytes/saved step");
    for (const auto& r : results) {
        const double lo = *std::min_element(r.ratios.begin(), r.ratios.end());
        const double hi = *std::max_element(r.ratios.begin(), r.ratios.end());
        std::printf("%-26s %10.3f %10.3f %7.3fx %7.3f-%-7.3f %7.3fx %11.3f %9.3f %16.0f\n", r.title.c_str(),
                    median(r.off) * 1e3, median(r.on) * 1e3, median(r.ratios), lo, hi, median(r.cpu_ratios),
                    median(r.in_hook) * 1e3, median(r.end) * 1e3, r.bytes_per_saved_step());
    }
    std::printf("  off/on ms: wall ms per step, median over the blocks; on/off: median of the pairs' ratios; cpu x:\n"
                "  the same of the process's CPU time (every thread: less moved by other jobs on a shared machine);\n"
                "  in hook: wall ms per step inside torch_hook's begin_step and after_backward; end: ms at the end\n"
                "  of a hook-on block (end_step + flush, counted in its time); bytes/saved step: event and index\n"
                "  files, per step saved.\n");
    std::printf("\n%-26s %10s %10s %12s %12s %14s\n", "process CPU ms per step", "off", "on", "on - off",
                "in hook", "writer threads");
    for (const auto& r : results) {
        std::printf("%-26s %10.3f %10.3f %12.3f %12.3f %14.3f\n", r.title.c_str(), median(r.off_cpu) * 1e3,
                    median(r.on_cpu) * 1e3, (median(r.on_cpu) - median(r.off_cpu)) * 1e3,
                    median(r.in_hook_cpu) * 1e3, r.writer_cpu * 1e3);
    }
    std::printf("  medians over the blocks; in hook: the training thread's CPU inside torch_hook's calls;\n"
                "  writer threads: the hook's data and publisher threads, over every hooked step.\n");
    for (const auto& r : results) {
        if (r.dropped != 0 || r.write_error) {
            std::printf("  %s: %llu tensors dropped; write error: %s\n", r.title.c_str(),
                        static_cast<unsigned long long>(r.dropped), r.write_error ? r.write_error->c_str() : "none");
        }
        if (!r.extra_per_saved.empty()) {
            const double extra = median(r.extra_per_saved);
            const double plain = median(r.plain);
            const auto [lo, hi] = std::minmax_element(r.extra_per_saved.begin(), r.extra_per_saved.end());
            std::printf("  %s, per saved step: the hook adds %.3f ms (on block - off block, per saved step;\n"
                        "    %.3f to %.3f over the blocks); write + close of the same %s into a new file in the\n"
                        "    same directory: %.3f ms; %.2fx\n",
                        r.title.c_str(), extra * 1e3, *lo * 1e3, *hi * 1e3,
                        megabytes(static_cast<double>(r.plain_bytes)).c_str(), plain * 1e3, extra / plain);
        }
    }
}

const json_value* python_phase(const python_result& py, const std::string& key) {
    if (!py.ran) {
        return nullptr;
    }
    const json_value* phases = py.doc.find("phases");
    return phases != nullptr ? phases->find(key) : nullptr;
}

std::string ratio_cell(double ratio, double cpu_ratio, double on_ms) {
    char text[64];
    std::snprintf(text, sizeof text, "%.2fx, cpu %.2fx (%.1f ms/step)", ratio, cpu_ratio, on_ms);
    return text;
}

void print_summary(const arguments& a, const std::vector<phase_result>& results, const python_result& py) {
    std::printf("\n%-44s %-34s %-34s\n", "what is saved (weights and gradients)", "tdbg torch_hook",
                a.python ? "Python smdebug" : "");
    for (const auto& r : results) {
        const std::string& what = r.title;
        std::string other;
        if (const json_value* p = python_phase(py, r.key)) {
            other = ratio_cell(p->at("ratio").as_double(), p->at("cpu_ratio").as_double(), p->at("on_ms").as_double());
        } else if (a.python) {
            other = "-";
        }
        std::printf("%-44s %-34s %-34s\n", what.c_str(),
                    ratio_cell(median(r.ratios), median(r.cpu_ratios), median(r.on) * 1e3).c_str(), other.c_str());
        if (!r.extra_per_saved.empty()) {
            char mine[64];
            std::snprintf(mine, sizeof mine, "%.2fx", median(r.extra_per_saved) / median(r.plain));
            std::string theirs = a.python ? "-" : "";
            if (const json_value* p = python_phase(py, r.key); p != nullptr && p->contains("saved_step_x_plain")) {
                char text[64];
                std::snprintf(text, sizeof text, "%.2fx", p->at("saved_step_x_plain").as_double());
                theirs = text;
            }
            std::printf("%-44s %-34s %-34s\n", "  raw: time per saved step / plain write", mine, theirs.c_str());
        }
    }
    std::printf("(reductions: %s; hook off: tdbg %.2f ms/step", std::string(reductions_list).c_str(),
                results.empty() ? 0.0 : median(results.front().off) * 1e3);
    if (const json_value* p = python_phase(py, results.empty() ? "" : results.front().key)) {
        std::printf(", PyTorch %.2f ms/step", p->at("off_ms").as_double());
    }
    std::printf(")\n");
    if (a.python && !py.ran) {
        std::printf("Python smdebug: %s\n", py.message.c_str());
    }
}

// The targets for a CUDA device with the model of 8 x Linear(4096, 4096), batch 256.
void print_targets(const arguments& a, const std::vector<phase_result>& results) {
    if (a.device != "cuda") {
        std::printf("\ntargets: they are set for a CUDA device (--device cuda); on the CPU, compare with the figures\n"
                    "of benchmarks/README.md\n");
        return;
    }
    std::printf("\ntargets (CUDA):\n");
    const bool fused = a.reducer == tdbg::device_reducer::automatic && fused_kernel_used();
    for (const auto& r : results) {
        double value = median(r.ratios);
        double limit = 1.02; // "1.00x", within the noise of the blocks
        std::string what = r.title + " (x hook off)";
        if (r.key == "reductions") {
            limit = fused ? 1.10 : 1.35;
            what += fused ? ", fused kernel" : ", torch operations";
        } else if (r.key == "raw") {
            if (r.extra_per_saved.empty()) {
                continue;
            }
            value = median(r.extra_per_saved) / median(r.plain);
            limit = 1.25;
            what = r.title + ", time per saved step (x plain write of its bytes)";
        }
        std::printf("  %-7s %s: %.3f %s %.2f\n", value <= limit ? "met" : "MISSED", what.c_str(), value,
                    value <= limit ? "<=" : ">", limit);
    }
}

json_value to_json(const arguments& a, const std::vector<phase_result>& results, const python_result& py) {
    json_value doc = json_value::object();
    doc["device"] = a.device;
    doc["model"] = a.model;
    doc["layers"] = a.layers;
    doc["width"] = a.width;
    doc["batch"] = a.batch;
    doc["loss"] = a.loss;
    doc["steps"] = a.steps;
    doc["warmup"] = a.warmup;
    doc["blocks"] = a.blocks;
    doc["threads"] = static_cast<std::int64_t>(torch::get_num_threads());
    doc["reducer"] = reducer_name(a.reducer);
    doc["force_device_path"] = a.force_device_path;
    doc["cuda_component"] = cuda_component_built();
    doc["fused_kernel"] = fused_kernel_used();
    doc["reduction_path"] = reduction_path(a);
    json_value phases = json_value::object();
    for (const auto& r : results) {
        json_value p = json_value::object();
        p["off_ms"] = median(r.off) * 1e3;
        p["on_ms"] = median(r.on) * 1e3;
        p["ratio"] = median(r.ratios);
        p["ratio_min"] = *std::min_element(r.ratios.begin(), r.ratios.end());
        p["ratio_max"] = *std::max_element(r.ratios.begin(), r.ratios.end());
        p["cpu_ratio"] = median(r.cpu_ratios);
        p["in_hook_ms"] = median(r.in_hook) * 1e3;
        p["in_hook_cpu_ms"] = median(r.in_hook_cpu) * 1e3;
        p["off_cpu_ms"] = median(r.off_cpu) * 1e3;
        p["on_cpu_ms"] = median(r.on_cpu) * 1e3;
        p["writer_cpu_ms"] = r.writer_cpu * 1e3;
        p["end_ms"] = median(r.end) * 1e3;
        p["saved_steps"] = r.saved_steps;
        p["bytes_per_saved_step"] = r.bytes_per_saved_step();
        p["dropped_tensors"] = r.dropped;
        if (!r.extra_per_saved.empty()) {
            p["saved_step_ms"] = median(r.extra_per_saved) * 1e3;
            p["plain_write_ms"] = median(r.plain) * 1e3;
            p["plain_write_bytes"] = r.plain_bytes;
            p["saved_step_x_plain"] = median(r.extra_per_saved) / median(r.plain);
        }
        phases[r.key] = std::move(p);
    }
    doc["phases"] = std::move(phases);
    if (py.ran) {
        doc["python"] = py.doc;
    } else if (a.python) {
        doc["python"] = py.message;
    }
    return doc;
}

int run(const arguments& a) {
    if (a.device == "cuda" && !torch::cuda::is_available()) {
        std::fprintf(stderr, "bench_libtorch: --device cuda, but torch::cuda::is_available() is false (no CUDA "
                             "device, or a libtorch built without CUDA)\n");
        return 1;
    }
    if (a.threads > 0) {
        torch::set_num_threads(a.threads);
    }
    torch::manual_seed(1);
    fs::remove_all(a.dir);
    fs::create_directories(a.dir);
    std::string load = "?";
    std::ifstream("/proc/loadavg") >> load;
    if (a.model == "mnist") {
        std::printf("bench_libtorch: MNIST conv net (conv 1->10 k5, conv 10->20 k5, dropout, fc 320->50, fc 50->10), "
                    "batch %lld of synthetic 28x28 images, NLL loss, SGD with momentum; device %s",
                    static_cast<long long>(a.batch), a.device.c_str());
    } else {
        std::printf("bench_libtorch: MLP of %lld x Linear(%lld, %lld) + ReLU, batch %lld, %s loss, SGD; device %s",
                    static_cast<long long>(a.layers), static_cast<long long>(a.width), static_cast<long long>(a.width),
                    static_cast<long long>(a.batch), a.loss == "ce" ? "cross-entropy" : "MSE", a.device.c_str());
    }
    if (a.device == "cuda") {
        std::printf(" (%zu visible)", torch::cuda::device_count());
    }
    std::printf("; libtorch %s, %d threads\n", TORCH_VERSION, static_cast<int>(torch::get_num_threads()));
    std::printf("torch_hook: reducer %s, force_device_path %s, tdbg::cuda %s; reductions: %s\n", reducer_name(a.reducer),
                a.force_device_path ? "on" : "off",
                fused_kernel_used() ? "built and used" : (cuda_component_built() ? "built (libtorch has no CUDA)" : "not built"),
                reduction_path(a).c_str());
    std::printf("%d blocks of %d steps per loop and phase (hook off and on alternating, the order flipped every pair),\n"
                "%d warm-up steps of each loop not counted; load average %s; runs under %s\n",
                a.blocks, a.steps, a.warmup, load.c_str(), a.dir.c_str());
    if (a.steps % raw_save_interval != 0) {
        std::printf("note: --steps is not a multiple of %d: raw blocks save different numbers of steps\n",
                    raw_save_interval);
    }
    std::fflush(stdout);

    trainer t(a);
    double ignored = 0;
    for (int s = 0; s < a.warmup; ++s) {
        t.step(nullptr, ignored, ignored);
    }
    std::vector<phase_result> results;
    for (const auto& key : a.phases) {
        results.push_back(run_phase(a, t, key));
    }
    print_phases(results);
    std::fflush(stdout);

    python_result py;
    if (a.python) {
        py = run_python(a);
        if (py.ran) {
            const json_value& d = py.doc;
            std::printf("Python smdebug %s, torch %s, %lld threads, device %s\n", d.at("smdebug_version").as_string().c_str(),
                        d.at("torch_version").as_string().c_str(), static_cast<long long>(d.at("threads").as_int64()),
                        d.at("device").as_string().c_str());
        }
    }
    print_targets(a, results);
    print_summary(a, results, py);
    if (!a.json.empty()) {
        std::ofstream(a.json) << tdbg::format::dump_json(to_json(a, results, py), {2, false, false}) << '\n';
    }
    if (!a.keep) {
        fs::remove_all(a.dir);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    try {
        return run(parse_arguments(argc, argv));
    } catch (const usage_error& e) {
        std::fprintf(stderr, "bench_libtorch: %s\n%s", e.what(), usage_text);
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_libtorch: %s\n", e.what());
        return 1;
    }
}
