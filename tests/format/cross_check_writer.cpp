// Writes event records of every dtype and a few shapes with tdbg's encoder,
// plus expected.json describing what they hold, for tests/python/check_events.py
// to decode with protoc-generated code (an independent protobuf decoder).
//
// usage: cross_check_writer <output directory>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/tfrecord.hpp"

using namespace tdbg;
using namespace tdbg::format;

namespace {

// Floats go to JSON as exact decimal text (NaN and infinities by name).
std::string float_text(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.17g", v);
    return buffer;
}

template <class T>
T pick(std::size_t i) {
    // Values that exercise sign, magnitude, and the edges of each type.
    if constexpr (std::is_same_v<T, bool>) {
        return i % 3 != 1;
    } else if constexpr (std::is_floating_point_v<T>) {
        const T special[] = {T(0),
                             T(-0.0),
                             T(1.5),
                             T(-2.25),
                             std::numeric_limits<T>::infinity(),
                             std::numeric_limits<T>::quiet_NaN(),
                             std::numeric_limits<T>::max(),
                             std::numeric_limits<T>::denorm_min(),
                             T(1) / T(3)};
        return special[i % 9];
    } else if constexpr (std::is_integral_v<T>) {
        const T special[] = {T(0), T(1), std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T(100)};
        // Wrapping arithmetic in unsigned: no signed overflow.
        return static_cast<T>(static_cast<std::uint64_t>(special[i % 5]) - static_cast<std::uint64_t>(i / 5));
    } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        const float special[] = {0.0F, 1.0F, -2.5F, 65504.0F, INFINITY, NAN, 0.33333334F};
        return T(special[i % 7]);
    } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
        using R = typename T::value_type;
        return T(R(1.5) * static_cast<R>(i), -R(0.25) - static_cast<R>(i));
    } else {
        return i % 2 == 0 ? std::string("text ") + std::to_string(i) : std::string("\xc3\xa9\0z", 4);
    }
}

template <class T>
nlohmann::json element_json(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v;
    } else if constexpr (std::is_floating_point_v<T>) {
        return float_text(static_cast<double>(v));
    } else if constexpr (std::is_integral_v<T>) {
        return v;
    } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        return float_text(static_cast<double>(v.value()));
    } else if constexpr (std::is_same_v<T, std::string>) {
        nlohmann::json bytes = nlohmann::json::array();
        for (unsigned char c : v) {
            bytes.push_back(c);
        }
        return bytes; // as byte values: JSON text need not be valid UTF-8 for this
    } else {
        return nlohmann::json::array(
            {float_text(static_cast<double>(v.real())), float_text(static_cast<double>(v.imag()))});
    }
}

template <class T>
tensor_value make_value(const tensor_value::shape_type& shape, nlohmann::json& values) {
    const std::size_t n = tensor_value::element_count(shape);
    values = nlohmann::json::array();
    if constexpr (std::is_same_v<T, bool>) {
        std::vector<bool> data;
        for (std::size_t i = 0; i < n; ++i) {
            data.push_back(pick<bool>(i));
            values.push_back(element_json(static_cast<bool>(data.back())));
        }
        return tensor_value(data, shape);
    } else {
        std::vector<T> data;
        for (std::size_t i = 0; i < n; ++i) {
            data.push_back(pick<T>(i));
            values.push_back(element_json(data.back()));
        }
        return tensor_value(std::move(data), shape);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: cross_check_writer <output directory>\n";
        return 2;
    }
    const std::filesystem::path out_dir = argv[1];
    std::filesystem::create_directories(out_dir);

    const std::vector<dtype> dtypes{dtype::float16, dtype::bfloat16,  dtype::float32,    dtype::float64,
                                    dtype::int8,    dtype::int16,     dtype::int32,      dtype::int64,
                                    dtype::uint8,   dtype::uint16,    dtype::uint32,     dtype::uint64,
                                    dtype::boolean, dtype::complex64, dtype::complex128, dtype::string};
    const std::vector<tensor_value::shape_type> shapes{{}, {5}, {2, 3}, {0}, {3, 1, 4}};
    const mode modes[] = {mode::train, mode::eval, mode::predict, mode::global};

    std::string events;
    nlohmann::json records = nlohmann::json::array();
    std::int64_t step = 0;
    for (dtype type : dtypes) {
        for (const auto& shape : shapes) {
            tensor_event ev;
            ev.step = step;
            ev.wall_time = step == 0 ? 0.0 : 1700000000.0 + static_cast<double>(step) * 0.001;
            ev.tag = "cross/" + std::string(dtype_name(type)) + "_" + std::to_string(shape.size()) + "d";
            nlohmann::json values;
            ev.value = visit_dtype(type, [&](auto tag) {
                using T = typename decltype(tag)::type;
                return make_value<T>(shape, values);
            });
            ev.mode = modes[step % 4];
            ev.mode_step = step / 4;
            const std::size_t offset = events.size();
            append_record(events, encode_tensor_event(ev), footer_kind::smdebug_constant);
            records.push_back({{"kind", "tensor"},
                               {"offset", offset},
                               {"step", ev.step},
                               {"wall_time", float_text(ev.wall_time)},
                               {"tag", ev.tag},
                               {"dtype", static_cast<int>(type)},
                               {"shape", shape},
                               {"values", values},
                               {"mode", static_cast<int>(*ev.mode)},
                               {"mode_step", *ev.mode_step}});
            ++step;
        }
    }

    std::string tensorboard;
    nlohmann::json tb = nlohmann::json::array();
    append_record(tensorboard, encode_file_version_event(1234.5), footer_kind::payload_crc);
    tb.push_back({{"kind", "file_version"}, {"wall_time", "1234.5"}});
    for (int i = 0; i < 3; ++i) {
        const float value = i == 1 ? 0.0F : 0.5F * static_cast<float>(i) - 3.0F;
        append_record(tensorboard, encode_scalar_event(1235.0 + i, i, "loss", value), footer_kind::payload_crc);
        tb.push_back({{"kind", "scalar"}, {"step", i}, {"tag", "loss"}, {"value", float_text(value)}});
    }
    histogram h;
    h.min = -1.5;
    h.max = 4;
    h.num = 10;
    h.sum = 7.25;
    h.sum_squares = 30.5;
    h.bucket_limit = {-1, 0, 1, 4};
    h.bucket = {2, 3, 0, 5};
    append_record(tensorboard, encode_histogram_event(1240.0, 9, "weights/w0", h), footer_kind::payload_crc);
    tb.push_back({{"kind", "histogram"},
                  {"step", 9},
                  {"tag", "weights/w0"},
                  {"min", h.min},
                  {"max", h.max},
                  {"num", h.num},
                  {"sum", h.sum},
                  {"sum_squares", h.sum_squares},
                  {"bucket_limit", h.bucket_limit},
                  {"bucket", h.bucket}});

    std::ofstream(out_dir / "events.tfevents", std::ios::binary) << events;
    std::ofstream(out_dir / "tensorboard.tfevents", std::ios::binary) << tensorboard;
    std::ofstream(out_dir / "expected.json") << nlohmann::json{{"events", records}, {"tensorboard", tb}}.dump(1);
    std::cout << "wrote " << records.size() << " tensor records and " << tb.size() << " TensorBoard records to "
              << out_dir.string() << "\n";
    return 0;
}
