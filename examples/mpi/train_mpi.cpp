// train_mpi: data-parallel training of the MLP of ../mlp_model.hpp under MPI,
// every rank saving its tensors with tdbg's hook into one run as worker_<rank>,
// the worker names smdebug's hooks give Horovod's (MPI) ranks.
//
//     mpirun -np 2 train_mpi --out DIR [--steps N] [--save-interval K] [--seed S] [--broken-rank R]
//
// Every rank builds the same 512-point data set from the seed and trains on its
// own shard of it, rows [rank*512/size, (rank+1)*512/size), one batch of 32 per
// step. Each rank's gradients are averaged over the ranks with MPI_Allreduce and
// every rank applies the same update, so the weights stay identical on all ranks
// (rank 0's initial weights are broadcast first, as Horovod's
// broadcast_parameters does, so that this holds whatever each rank initialised).
//
// What each worker saves, every K-th step: the weights the step uses
// ("MLP_fc1.weight", ...), identical on every worker; its own loss
// ("CrossEntropyLoss_output_0") and its own gradients ("gradient/MLP_fc1.weight",
// ...) as backward computed them, before averaging, so one per shard: they
// differ from worker to worker, which is what tells a bad shard apart (and it is
// where smdebug's PyTorch parameter hooks see gradients under Horovod). The
// weights then move by the mean of the workers' gradients. And the loss averaged
// over the ranks ("scalar/mean_loss"), identical on every worker.
//
// --broken-rank R makes rank R's data loader yield zeros, a fault to find: the
// gradient of MLP_fc1.weight is then exactly zero on worker_R alone, which the
// AllZero rule reports (`tdbg rules DIR --rule AllZero --param collection_names=gradients`).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "example_args.hpp"
#include "mlp_model.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/hook/worker.hpp"

namespace {

using mlp_example::learning_rate;

struct arguments {
    std::string out;
    long steps = 100;
    long save_interval = 10;
    unsigned long seed = 1;
    std::optional<long> broken_rank;
    bool help = false;
};

const char* const usage_text =
    "usage: mpirun -np N train_mpi --out DIR [--steps N] [--save-interval K] [--seed S] [--broken-rank R]\n"
    "  --out DIR           the run directory every rank writes (must not hold a finished run)\n"
    "  --steps N           training steps (default 100)\n"
    "  --save-interval K   save every K-th step (default 10)\n"
    "  --seed S            random seed for data and weights, the same on every rank (default 1)\n"
    "  --broken-rank R     rank R gets all-zero inputs, to see a rule find it (default: none)\n";

// Throws std::invalid_argument naming the argument at fault.
arguments parse_arguments(int argc, char** argv) {
    const auto p = example_args::parse(
        argc, argv, {{"--steps", 100}, {"--save-interval", 10}, {"--seed", 1}, {"--broken-rank", -1}});
    arguments a;
    a.help = p.help;
    if (a.help) {
        return a;
    }
    if (p.number("--save-interval") == 0) {
        throw std::invalid_argument("--save-interval must be at least 1");
    }
    a.out = p.out;
    a.steps = p.number("--steps");
    a.save_interval = p.number("--save-interval");
    a.seed = static_cast<unsigned long>(p.number("--seed"));
    if (p.number("--broken-rank") >= 0) {
        a.broken_rank = p.number("--broken-rank");
    }
    return a;
}

// Calls `f` on each parameter tensor of `p` (a model or its gradients), always in the same order.
template <class Parameters, class F>
void for_each_parameter(Parameters& p, F&& f) {
    f(p.w1);
    f(p.b1);
    f(p.w2);
    f(p.b2);
}

// Rank 0's parameters, on every rank.
void broadcast_parameters(mlp_example::mlp& m) {
    for_each_parameter(
        m, [](auto& part) { MPI_Bcast(part.data(), static_cast<int>(part.size()), MPI_FLOAT, 0, MPI_COMM_WORLD); });
}

// The mean over the ranks of every rank's gradients, in one allreduce of one buffer
// (as Horovod fuses small tensors): summed, then divided by the number of ranks.
mlp_example::gradients average_over_ranks(const mlp_example::gradients& g, int ranks) {
    std::vector<float> buffer;
    for_each_parameter(g, [&](const auto& part) { buffer.insert(buffer.end(), part.begin(), part.end()); });
    MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    mlp_example::gradients mean = g;
    auto next = buffer.begin();
    for_each_parameter(mean, [&](auto& part) {
        for (float& v : part) {
            v = *next++ / static_cast<float>(ranks);
        }
    });
    return mean;
}

float mean_over_ranks(float value, int ranks) {
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return value / static_cast<float>(ranks);
}

// True on every rank when a rule asked any rank's hook to stop: each hook looks
// for the stop marker on its own schedule, and a rank leaving the loop alone
// would leave the others waiting in the allreduce for ever.
bool any_rank_stops(bool stop) {
    int flag = stop ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return flag != 0;
}

void train(const arguments& args, int rank, int ranks) {
    std::mt19937 rng(static_cast<std::mt19937::result_type>(args.seed));
    const mlp_example::dataset data = mlp_example::make_dataset(rng);
    mlp_example::mlp model = mlp_example::init_model(rng);
    broadcast_parameters(model);
    const std::size_t shard_first =
        mlp_example::points * static_cast<std::size_t>(rank) / static_cast<std::size_t>(ranks);
    const std::size_t shard_end =
        mlp_example::points * static_cast<std::size_t>(rank + 1) / static_cast<std::size_t>(ranks);
    const bool broken = args.broken_rank && *args.broken_rank == rank;

    tdbg::hook_options options;
    options.out_dir = args.out;
    options.save_config =
        tdbg::save_config(tdbg::save_config_mode{static_cast<std::uint64_t>(args.save_interval), {}, 0, std::nullopt});
    options.include_collections = {"weights", "biases", "gradients", "losses"};
    // smdebug's default saves worker_0 only; a data-parallel run wants every shard's view.
    options.include_workers = tdbg::workers_to_save::all;
    // The hook reads its rank from the launcher's environment; a launcher it does not
    // know sets none of those variables, and then MPI's own numbering is passed on.
    const tdbg::worker_info launcher = tdbg::detect_worker();
    std::string source = launcher.source;
    if (launcher.rank != rank || launcher.size != ranks) {
        options.worker = tdbg::worker_name(rank);
        options.num_workers = ranks;
        source = "MPI_Comm_rank";
    }

    tdbg::hook hook(options);
    // Every rank's hook checks that the run has not ended before any rank can end it.
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        std::printf("%d workers, named worker_<rank> from %s; this one is %s\n", ranks, source.c_str(),
                    hook.worker().c_str());
    }

    hook.set_mode(tdbg::mode::train);
    float first_loss = 0;
    float last_loss = 0;
    for (long step = 0; step < args.steps; ++step) {
        hook.begin_step();
        if (any_rank_stops(hook.should_stop())) {
            if (rank == 0) {
                std::printf("stopping at step %ld: a rule asked\n", step);
            }
            break;
        }
        mlp_example::dataset b = mlp_example::make_batch(data, shard_first, shard_end - shard_first, step);
        if (broken) {
            std::fill(b.x.begin(), b.x.end(), 0.0F);
        }
        // As smdebug's forward pre-hook does: the weights this step uses.
        hook.save_tensor("MLP_fc1.weight", model.w1);
        hook.save_tensor("MLP_fc1.bias", model.b1);
        hook.save_tensor("MLP_fc2.weight", model.w2);
        hook.save_tensor("MLP_fc2.bias", model.b2);
        const mlp_example::forward_pass f = mlp_example::forward(model, b.x, b.labels);
        hook.save_tensor("CrossEntropyLoss_output_0", tdbg::tensor_value::scalar(f.loss));
        const mlp_example::gradients g = mlp_example::backward(model, b.x, b.labels, f);
        hook.save_tensor("gradient/MLP_fc2.bias", g.b2);
        hook.save_tensor("gradient/MLP_fc2.weight", g.w2);
        hook.save_tensor("gradient/MLP_fc1.bias", g.b1);
        hook.save_tensor("gradient/MLP_fc1.weight", g.w1);

        const mlp_example::gradients mean = average_over_ranks(g, ranks);
        model.w1 -= learning_rate * mean.w1;
        model.b1 -= learning_rate * mean.b1;
        model.w2 -= learning_rate * mean.w2;
        model.b2 -= learning_rate * mean.b2;

        const float mean_loss = mean_over_ranks(f.loss, ranks);
        // save_scalar saves whenever it is called: only at the steps the rest is saved.
        if (hook.is_saving_step()) {
            hook.save_scalar("mean_loss", static_cast<double>(mean_loss));
        }
        first_loss = step == 0 ? mean_loss : first_loss;
        last_loss = mean_loss;
        if (rank == 0 && (step % 50 == 0 || step + 1 == args.steps)) {
            std::printf("train step %4ld  mean loss %.4f\n", step, static_cast<double>(mean_loss));
        }
    }

    // Publish this worker's last step, and wait until every worker has, before any
    // writes the end marker: a reader following the run live then never sees it
    // end while a worker's last step is still missing.
    hook.end_step();
    hook.flush();
    MPI_Barrier(MPI_COMM_WORLD);
    hook.close();
    if (rank == 0 && args.steps > 0) {
        std::printf("mean loss %.4f -> %.4f; run written to %s\n", static_cast<double>(first_loss),
                    static_cast<double>(last_loss), args.out.c_str());
    }
}

} // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    int ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    arguments args;
    try {
        args = parse_arguments(argc, argv);
        if (args.broken_rank && *args.broken_rank >= ranks) {
            throw std::invalid_argument("--broken-rank " + std::to_string(*args.broken_rank) + " but only " +
                                        std::to_string(ranks) + " ranks");
        }
    } catch (const std::invalid_argument& e) {
        if (rank == 0) {
            std::fprintf(stderr, "train_mpi: %s\n%s", e.what(), usage_text);
        }
        MPI_Finalize();
        return 2;
    }
    if (args.help) {
        if (rank == 0) {
            std::fputs(usage_text, stdout);
        }
        MPI_Finalize();
        return 0;
    }

    try {
        train(args, rank, ranks);
        MPI_Finalize();
        return 0;
    } catch (const std::exception& e) {
        // The other ranks may be waiting in a collective call: end them all.
        std::fprintf(stderr, "train_mpi: rank %d: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return 1;
}
