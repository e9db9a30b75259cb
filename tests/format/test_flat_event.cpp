// The hook's flat encoder of tensor events (format/detail/flat_event.hpp) against the one
// encoder of smdebug's bytes (write_tensor_event): the same bytes for every dtype but string,
// every rank from 0-d to many dimensions, empty and zero-sized dims, long tags (two-byte
// lengths at every level), steps and wall times of zero, negative and large, with and without
// the mode plugins.

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/detail/flat_event.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/event.hpp"

using namespace tdbg;

namespace {

std::string nested_encoding(const format::tensor_event& ev) {
    return format::detail::encode_message([&](auto& w) { format::detail::write_tensor_event(w, ev); });
}

std::string flat_encoding(const format::tensor_event& ev) {
    std::string out = "prefix"; // appended after what the string holds
    format::detail::append_flat_tensor_event(out, ev);
    REQUIRE(out.compare(0, 6, "prefix") == 0);
    return out.substr(6);
}

// A value of `type` and `shape` whose bytes are those of 0, 1, 2, ...
tensor_value value_of(dtype type, const tensor_value::shape_type& shape) {
    const std::size_t n = tensor_value::element_count(shape) * dtype_size(type);
    std::string bytes(n, '\0');
    for (std::size_t i = 0; i < n; ++i) {
        bytes[i] = static_cast<char>(i % 251);
    }
    if (type == dtype::boolean) {
        for (char& b : bytes) {
            b = static_cast<char>(b & 1);
        }
    }
    return tensor_value::from_bytes(type, shape, bytes);
}

} // namespace

TEST_CASE("flat event encoder: write_tensor_event's bytes for every numeric dtype, rank and header") {
    const std::vector<dtype> types{dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16,  dtype::int8,
                                   dtype::int16,   dtype::int32,   dtype::int64,   dtype::uint8,     dtype::uint16,
                                   dtype::uint32,  dtype::uint64,  dtype::boolean, dtype::complex64, dtype::complex128};
    const std::vector<tensor_value::shape_type> shapes{{},   {1},    {0},   {3, 0, 2},
                                                       {16}, {2, 3}, {130}, {1, 1, 1, 1, 1, 7}};
    const std::vector<std::string> tags{"", "loss", "smdebug/reductions/abs_mean/gradient/layer12.weight",
                                        std::string(200, 'w'), std::string(20000, 't')};
    std::size_t compared = 0;
    for (const dtype type : types) {
        for (const auto& shape : shapes) {
            for (const std::string& tag : tags) {
                format::tensor_event ev;
                ev.tag = tag;
                ev.value = value_of(type, shape);
                ev.step = static_cast<std::int64_t>(compared % 5 == 0 ? 0 : compared * 37);
                ev.wall_time = compared % 7 == 0 ? 0.0 : 1.7e9 + static_cast<double>(compared);
                if (compared % 3 != 0) {
                    ev.mode = static_cast<tdbg::mode>(compared % 4);
                }
                if (compared % 4 != 1) {
                    ev.mode_step = static_cast<std::int64_t>(compared * 13);
                }
                INFO(dtype_name(type) << ", rank " << shape.size() << ", tag of " << tag.size() << " bytes, step "
                                      << ev.step);
                REQUIRE(format::detail::flat_encodable(ev));
                CHECK(flat_encoding(ev) == nested_encoding(ev));
                ++compared;
            }
        }
    }
    CHECK(compared == types.size() * shapes.size() * tags.size());
}

TEST_CASE("flat event encoder: negative, large and -0.0 headers, values past 127 and 16383 bytes") {
    std::mt19937 rng(7);
    for (const std::int64_t step : {std::int64_t{-1}, std::int64_t{-123456789}, std::int64_t{127}, std::int64_t{128},
                                    std::int64_t{16383}, std::int64_t{16384}, std::int64_t{1} << 40}) {
        for (const double wall : {-0.0, 0.0, -1.5, 1e300}) {
            for (const std::size_t n : {std::size_t{31}, std::size_t{32}, std::size_t{4095}, std::size_t{4096}}) {
                format::tensor_event ev;
                ev.tag = "t" + std::to_string(rng() % 1000);
                ev.value = value_of(dtype::float32, {n});
                ev.step = step;
                ev.wall_time = wall;
                ev.mode = tdbg::mode::eval;
                ev.mode_step = step;
                INFO("step " << step << ", wall " << wall << ", " << n << " floats");
                CHECK(flat_encoding(ev) == nested_encoding(ev));
            }
        }
    }
}

TEST_CASE("flat event encoder: string tensors are left to write_tensor_event") {
    format::tensor_event ev;
    ev.tag = "names";
    ev.value = tensor_value(std::vector<std::string>{"a", "b"}, {2});
    CHECK_FALSE(format::detail::flat_encodable(ev));
    ev.value = tensor_value(std::vector<float>{1.0F}, {1});
    CHECK(format::detail::flat_encodable(ev));
}
