// Writes runs with tdbg's hook for the real Python smdebug to read
// (test_smdebug.cpp compares its reading with `tdbg dump --json`):
//
//   dtypes/          every dtype smdebug's reader maps to numpy, in several shapes
//   modes_workers/   two workers, the four modes with a schedule each, stored
//                    reductions (all 18), shapes, raw values with reductions, scalars
//   tensorboard/     the same kind of run with TensorBoard export on
//
// usage: cross_writer OUT_ROOT RUN
// Prints its manifest, for the test to check that Python read every tensor
// and every value: a line "tensor NAME ENTRIES" per tensor saved, with the
// number of index entries (step and worker) that hold it, and a line
// "value NAME STEP WORKER SHA256" per raw value saved (the sha256 of its bytes).

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tdbg/core/detail/sha256.hpp"
#include "tdbg/hook/hook.hpp"

namespace {

using tdbg::tensor_value;

// A deterministic value in [-2, 2) for element `i` of a tensor seeded with `seed`.
double wave(std::size_t i, double seed) { return 2.0 * std::sin(0.7 * static_cast<double>(i) + seed); }

template <class T>
tensor_value make(const tensor_value::shape_type& shape, double seed, double scale = 1.0) {
    std::vector<T> data(tensor_value::element_count(shape));
    for (std::size_t i = 0; i < data.size(); ++i) {
        const double x = wave(i, seed) * scale;
        if constexpr (std::is_same_v<T, std::complex<double>>) {
            data[i] = T(x, -x / 3.0);
        } else if constexpr (std::is_same_v<T, tdbg::float16>) {
            data[i] = T(static_cast<float>(x));
        } else if constexpr (std::is_integral_v<T>) {
            data[i] = static_cast<T>(std::llround(x * 20.0));
        } else {
            data[i] = static_cast<T>(x);
        }
    }
    return tensor_value(std::move(data), shape);
}

tensor_value make_bool(const tensor_value::shape_type& shape, double seed) {
    std::vector<bool> data(tensor_value::element_count(shape));
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = wave(i, seed) > 0;
    }
    return tensor_value(data, shape);
}

// Saves through a hook and counts, per tensor name, the steps that saved it;
// prints the hash of each raw value saved (`raw`: its collection saves raw values).
class saver {
public:
    saver(tdbg::hook& hook, std::map<std::string, int>& manifest) : hook_(hook), manifest_(manifest) {}
    void save(const std::string& name, const tensor_value& value, bool raw = true) {
        if (hook_.should_save_tensor(name)) {
            ++manifest_[name];
            if (raw) {
                std::printf("value %s %lld %s %s\n", name.c_str(), static_cast<long long>(hook_.global_step()),
                            hook_.worker().c_str(), tdbg::detail::sha256_hex(value.bytes()).c_str());
            }
        }
        hook_.save_tensor(name, value);
    }
    void scalar(const std::string& name, double value) {
        ++manifest_["scalar/" + name]; // save_scalar saves at every step, as float64 (1,)
        std::printf("value scalar/%s %lld %s %s\n", name.c_str(), static_cast<long long>(hook_.global_step()),
                    hook_.worker().c_str(), tdbg::detail::sha256_hex(tensor_value(std::vector<double>{value}).bytes()).c_str());
        hook_.save_scalar(name, value);
    }

private:
    tdbg::hook& hook_;
    std::map<std::string, int>& manifest_;
};

tdbg::save_config_mode every(std::uint64_t interval) {
    tdbg::save_config_mode m;
    m.save_interval = interval;
    return m;
}

tdbg::collection collection_of(const std::string& name, const std::string& regex, const std::string& reductions,
                               bool raw, bool shape) {
    tdbg::collection c(name);
    c.include(regex);
    c.set_reduction_config(tdbg::reduction_config::parse(reductions, raw, shape));
    return c;
}

// Every dtype smdebug reads (float16/32/64, int8, int32, int64, uint8, bool,
// complex128), as 0-d, 1-D, N-D and larger-than-inline (> 16 elements) values,
// over five TRAIN steps.
void write_dtypes(const std::filesystem::path& dir, std::map<std::string, int>& manifest) {
    tdbg::hook_options options;
    options.out_dir = dir.string();
    options.save_config = tdbg::save_config(every(1));
    options.include_collections = {"dtypes"};
    options.collections = {collection_of("dtypes", "^dt/", "", true, false)};
    tdbg::hook hook(options);
    saver out(hook, manifest);
    hook.set_mode(tdbg::mode::train);
    for (int step = 0; step < 5; ++step) {
        hook.begin_step();
        const double s = step;
        out.save("dt/f16_2d", make<tdbg::float16>({3, 4}, s));
        out.save("dt/f32_3d", make<float>({2, 3, 4}, s));
        out.save("dt/f32_0d", make<float>({}, s));
        out.save("dt/f64_1d", make<double>({7}, s, 1e3));
        out.save("dt/i8_1d", make<std::int8_t>({9}, s));
        out.save("dt/i32_2d", make<std::int32_t>({4, 5}, s));
        out.save("dt/i64_0d", make<std::int64_t>({}, s));
        out.save("dt/u8_1d", make<std::uint8_t>({6}, s + 1.0, 0.5));
        out.save("dt/bool_1d", make_bool({8}, s));
        out.save("dt/c128_1d", make<std::complex<double>>({3}, s));
        out.save("dt/f32_big", make<float>({8, 16}, s));
        out.save("loss", make<float>({}, s, 1.0 / (1.0 + s)));
    }
    hook.close();
}

// Two workers writing the same run, as two hooks of one process, through the
// four modes with a schedule each.
void write_modes_workers(const std::filesystem::path& dir, bool tensorboard, std::map<std::string, int>& manifest) {
    tdbg::save_config schedule;
    schedule.set(tdbg::mode::train, every(2));
    schedule.set(tdbg::mode::eval, every(1));
    tdbg::save_config_mode predict = every(1000);
    predict.save_steps = {1, 2};
    schedule.set(tdbg::mode::predict, predict);
    schedule.set(tdbg::mode::global, every(3));

    auto options_for = [&](int rank) {
        tdbg::hook_options options;
        options.out_dir = dir.string();
        options.worker = "worker_" + std::to_string(rank);
        options.num_workers = 2;
        options.include_workers = tdbg::workers_to_save::all;
        options.save_config = schedule;
        options.export_tensorboard = tensorboard;
        options.include_collections = {"weights", "gradients"};
        options.collections = {
            collection_of("reduced", "^red/", "min,max,mean,std,variance,sum,prod,l1_norm,l2_norm,abs_min,abs_max,"
                                              "abs_mean,abs_std,abs_variance,abs_sum,abs_prod,abs_l1_norm,abs_l2_norm",
                          false, true),
            collection_of("mixed", "^mixed/", "min,max,mean,l2_norm,abs_mean", true, false),
            collection_of("shapes", "^shape/", "", false, true),
        };
        return options;
    };
    tdbg::hook first(options_for(0));
    tdbg::hook second(options_for(1));
    saver savers[] = {saver(first, manifest), saver(second, manifest)};
    // TRAIN 0-5, EVAL 6-9 (mode steps 0-3), PREDICT 10-12, TRAIN 13-14 (6-7), GLOBAL 15-17.
    const std::vector<std::pair<tdbg::mode, int>> phases{{tdbg::mode::train, 6},
                                                         {tdbg::mode::eval, 4},
                                                         {tdbg::mode::predict, 3},
                                                         {tdbg::mode::train, 2},
                                                         {tdbg::mode::global, 3}};
    int global = 0;
    for (const auto& [m, count] : phases) {
        first.set_mode(m);
        second.set_mode(m);
        for (int i = 0; i < count; ++i, ++global) {
            for (int rank = 0; rank < 2; ++rank) {
                (rank == 0 ? first : second).begin_step();
                saver& h = savers[rank];
                const double s = global + 0.25 * rank;
                h.save("weights/w0", make<float>({4, 3}, 0.1 * global));
                h.save("gradient/w0", make<float>({4, 3}, s, std::pow(0.5, global)));
                h.save("red/f32_3d", make<float>({3, 4, 5}, s), false);
                h.save("red/f64_1d", make<double>({8}, s, 100.0), false);
                h.save("red/i32_1d", make<std::int32_t>({6}, s), false);
                h.save("mixed/f32_2d", make<float>({5, 2}, s));
                h.save("shape/f32_4d", make<float>({2, 1, 3, 2}, s), false);
                if (rank == 1 && global == 4) {
                    h.save("mixed/only_worker_1", make<float>({2}, s));
                }
                h.save("CrossEntropyLoss_output_0", make<float>({}, s, 1.0 / (1.0 + global)));
                h.scalar("lr", 0.1 / (1.0 + global));
            }
        }
    }
    first.close();
    second.close();
}

} // namespace

int main(int argc, char** argv) {
    const std::string run = argc == 3 ? argv[2] : "";
    if (run != "dtypes" && run != "modes_workers" && run != "tensorboard") {
        std::fprintf(stderr, "usage: cross_writer OUT_ROOT dtypes|modes_workers|tensorboard\n");
        return 2;
    }
    try {
        const std::filesystem::path dir = std::filesystem::path(argv[1]) / run;
        std::filesystem::remove_all(dir);
        std::map<std::string, int> manifest;
        if (run == "dtypes") {
            write_dtypes(dir, manifest);
        } else {
            write_modes_workers(dir, run == "tensorboard", manifest);
        }
        for (const auto& [name, entries] : manifest) {
            std::printf("tensor %s %d\n", name.c_str(), entries);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cross_writer: %s\n", e.what());
        return 1;
    }
    return 0;
}
