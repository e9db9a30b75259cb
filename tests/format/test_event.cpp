#include <catch2/catch.hpp>

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hook_paths.hpp"
#include "support.hpp"
#include "tdbg/format/detail/event_pieces.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/tfrecord.hpp"

using tdbg::test::bytes;

using namespace tdbg;
using namespace tdbg::format;

namespace {

std::string le_bytes(const void* p, std::size_t n) { return std::string(static_cast<const char*>(p), n); }

// A deterministic value of any dtype and shape (element bytes vary with the index).
tensor_value make_value(dtype type, const tensor_value::shape_type& shape) {
    const std::size_t n = tensor_value::element_count(shape);
    if (type == dtype::string) {
        std::vector<std::string> s;
        for (std::size_t i = 0; i < n; ++i) {
            s.push_back(i % 3 == 0 ? std::string() : "s" + std::to_string(i) + std::string("\0\xe9", 2));
        }
        return tensor_value(std::move(s), shape);
    }
    std::string raw(n * dtype_size(type), '\0');
    for (std::size_t i = 0; i < raw.size(); ++i) {
        raw[i] = static_cast<char>((i * 37 + 11) & 0xFF);
    }
    if (type == dtype::boolean) {
        for (std::size_t i = 0; i < raw.size(); ++i) {
            raw[i] = static_cast<char>(i % 3 == 1);
        }
    }
    return tensor_value::from_bytes(type, shape, raw);
}

bool same_value(const tensor_value& a, const tensor_value& b) {
    if (a.type() != b.type() || a.shape() != b.shape()) {
        return false;
    }
    return a.type() == dtype::string ? a.strings() == b.strings() : a.bytes() == b.bytes();
}

const std::vector<dtype> every_dtype{dtype::float16, dtype::bfloat16,  dtype::float32,    dtype::float64,
                                     dtype::int8,    dtype::int16,     dtype::int32,      dtype::int64,
                                     dtype::uint8,   dtype::uint16,    dtype::uint32,     dtype::uint64,
                                     dtype::boolean, dtype::complex64, dtype::complex128, dtype::string};

std::string decode_error(const std::string& payload, std::uint64_t offset = 0) {
    try {
        (void)decode_tensor_event(payload, nullptr, "events/e.tfevents", offset);
    } catch (const format_error& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST_CASE("event: a float32 tensor encodes to exactly the bytes smdebug writes") {
    tensor_event ev;
    ev.step = 3;
    ev.wall_time = 1.5;
    ev.tag = "a";
    ev.value = tensor_value(std::vector<float>{1.0F, -2.0F});
    ev.mode = mode::train;
    ev.mode_step = 1;
    // Worked out by hand from the field numbers (see docs/format.md):
    const std::string dim = bytes({0x08, 0x02, 0x12, 0x03, 'a', '_', '2'});
    const std::string shape = bytes({0x12, 0x07}) + dim;
    const float values[] = {1.0F, -2.0F};
    const std::string tensor = bytes({0x08, 0x01, 0x12, 0x09}) + shape + bytes({0x22, 0x08}) + le_bytes(values, 8);
    const std::string plugin_step = bytes({0x0A, 0x09}) + "mode_step" + bytes({0x12, 0x01, '1'});
    const std::string plugin_mode = bytes({0x0A, 0x04}) + "mode" + bytes({0x12, 0x01, '1'});
    const std::string metadata = bytes({0x0A, 0x0E}) + plugin_step + bytes({0x0A, 0x09}) + plugin_mode;
    const std::string value = bytes({0x0A, 0x01, 'a', 0x42, 0x17}) + tensor + bytes({0x4A, 0x1B}) + metadata;
    const std::string summary = bytes({0x0A, 0x39}) + value;
    const double wall = 1.5;
    const std::string expected = bytes({0x09}) + le_bytes(&wall, 8) + bytes({0x10, 0x03, 0x2A, 0x3B}) + summary;
    REQUIRE(expected.size() == 72);
    CHECK(encode_tensor_event(ev) == expected);

    const tensor_event back = decode_tensor_event(expected, nullptr, "f", 0);
    CHECK(back.step == 3);
    CHECK(back.wall_time == 1.5);
    CHECK(back.tag == "a");
    CHECK(back.mode == mode::train);
    CHECK(back.mode_step == 1);
    CHECK(same_value(back.value, ev.value));
}

TEST_CASE("event: proto3 defaults are omitted, 0-d shapes are present and empty, sizes of 0 are omitted") {
    tensor_event ev;
    ev.tag = "t";
    ev.value = tensor_value::scalar(std::int64_t{5});
    ev.mode = mode::global;
    ev.mode_step = 0;
    const std::string out = encode_tensor_event(ev);
    // No wall_time (field 1) and no step (field 2): the Event starts with its summary.
    CHECK(static_cast<unsigned char>(out[0]) == 0x2A);
    // TensorProto: dtype 9, an empty tensor_shape, then 8 content bytes.
    const std::int64_t five = 5;
    CHECK_THAT(out, Catch::Contains(bytes({0x42, 0x0E, 0x08, 0x09, 0x12, 0x00, 0x22, 0x08}) + le_bytes(&five, 8)));
    CHECK_THAT(out, Catch::Contains(bytes({0x12, 0x01, '0'}))); // mode_step "0" is a string: written
    CHECK_THAT(out, Catch::Contains(bytes({0x12, 0x01, '4'}))); // GLOBAL

    // An empty float tensor: the dim has a name but no size, and there is no tensor_content.
    ev.value = tensor_value(std::vector<float>{}, {0});
    const std::string empty = encode_tensor_event(ev);
    CHECK_THAT(empty, Catch::Contains(
                          bytes({0x42, 0x0B, 0x08, 0x01, 0x12, 0x07, 0x12, 0x05, 0x12, 0x03, 't', '_', '0', 0x4A})));
    const tensor_event back = decode_tensor_event(empty, nullptr, "f", 0);
    CHECK(back.value.type() == dtype::float32);
    CHECK(back.value.shape() == tensor_value::shape_type{0});

    // A negative step takes ten varint bytes, as protobuf writes int64.
    ev.step = -2;
    const std::string negative = encode_tensor_event(ev);
    CHECK(negative.substr(0, 11) == bytes({0x10, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
    CHECK(decode_tensor_event(negative, nullptr, "f", 0).step == -2);
}

TEST_CASE("event: strings are written as smdebug writes them: no dtype, one string_val per element") {
    tensor_event ev;
    ev.tag = "s";
    ev.step = 1;
    ev.value = tensor_value(std::vector<std::string>{"ab", ""}, {2});
    ev.mode = mode::eval;
    ev.mode_step = 1;
    const std::string out = encode_tensor_event(ev);
    CHECK_THAT(out, Catch::Contains(bytes({0x42, 0x11, 0x12, 0x09}))); // TensorProto starts with its shape
    CHECK_THAT(out, Catch::Contains(bytes({0x42, 0x02, 'a', 'b', 0x42, 0x00, 0x4A})));
    const tensor_event back = decode_tensor_event(out, nullptr, "f", 0);
    CHECK(back.value.type() == dtype::string);
    CHECK(back.value.strings() == std::vector<std::string>{"ab", ""});
}

TEST_CASE("event: string elements are viewed in the record, or gathered when other fields come between them") {
    tensor_event ev;
    ev.tag = "s";
    ev.value = tensor_value(std::vector<std::string>{"ab", "", "cde"});
    auto buffer = std::make_shared<std::string>(encode_tensor_event(ev));
    const std::string_view payload(*buffer);
    const tensor_event viewed = decode_tensor_event(payload, buffer, "f", 0);
    const std::string_view first = viewed.value.string_views()[0];
    CHECK(first == "ab");
    CHECK((first.data() > payload.data() && first.data() < payload.data() + payload.size())); // in the record
    const tensor_event copied = decode_tensor_event(payload, nullptr, "f", 0);
    CHECK(copied.value.strings() == std::vector<std::string>{"ab", "", "cde"});
    CHECK_FALSE((copied.value.string_views()[0].data() >= payload.data() &&
                 copied.value.string_views()[0].data() < payload.data() + payload.size()));

    // A TensorProto whose string_val fields other fields interrupt, one of them with its key in
    // two bytes (0xC2 0x00 is field 8, length-delimited, too): the elements in their order.
    const std::string tensor = bytes({0x42, 0x01, 'x', 0x12, 0x04, 0x12, 0x02, 0x08, 0x03, 0x42, 0x00, 0xC2, 0x00,
                                      0x02, 'y', 'z'});
    const std::string value = bytes({0x0A, 0x01, 't', 0x42, static_cast<int>(tensor.size())}) + tensor;
    const std::string summary = bytes({0x0A, static_cast<int>(value.size())}) + value;
    const std::string event = bytes({0x2A, static_cast<int>(summary.size())}) + summary;
    auto owned = std::make_shared<std::string>(event);
    const tensor_event gathered = decode_tensor_event(*owned, owned, "f", 0);
    CHECK(gathered.value.shape() == tensor_value::shape_type{3});
    CHECK(gathered.value.strings() == std::vector<std::string>{"x", "", "yz"});
}

TEST_CASE("event: a tensor event is refused at its second summary value, before it is read") {
    tensor_event ev;
    ev.tag = "w";
    ev.value = tensor_value(std::vector<float>{1.0F});
    const std::string one = encode_tensor_event(ev);
    // The Event's summary (field 5) holds one Summary.Value: a second, appended as another
    // summary field (protobuf merges them), holds garbage a full decoder would fail on.
    const std::string second = bytes({0x2A, 0x05, 0x0A, 0x03, 0xFF, 0xFF, 0xFF});
    CHECK_THROWS_WITH(decode_tensor_event(one + second, nullptr, "f", 100),
                      "f at byte " + std::to_string(100 + one.size() + 2) +
                          ": expected an Event with one tensor summary, found a second summary value");
    CHECK_THROWS_AS(decode_event(one + second, "f", 100), format_error); // the full decoder reads it
    CHECK(decode_event_wall_time(one + second, "f", 100) == 0.0);       // the wall time skips the summary
    CHECK_THROWS_WITH(decode_tensor_event(encode_scalar_event(1.0, 2, "loss", 1.0F), nullptr, "tb", 0),
                      "tb at byte 0: expected an Event with one tensor summary, found 0 tensors in 1 summary values");

    // A shape of more dimensions than a tensor may have is refused naming their number.
    std::string shape;
    for (int i = 0; i < 1000; ++i) {
        shape += bytes({0x12, 0x02, 0x08, 0x01});
    }
    std::string tensor = bytes({0x08, 0x01, 0x12}); // dtype float32, then the shape
    tensor += bytes({static_cast<int>(0x80 | (shape.size() & 0x7F)), static_cast<int>(shape.size() >> 7)}) + shape;
    std::string value = bytes({0x0A, 0x01, 'd', 0x42}) +
                        bytes({static_cast<int>(0x80 | (tensor.size() & 0x7F)), static_cast<int>(tensor.size() >> 7)}) +
                        tensor;
    std::string summary = bytes({0x0A}) +
                          bytes({static_cast<int>(0x80 | (value.size() & 0x7F)), static_cast<int>(value.size() >> 7)}) +
                          value;
    const std::string event = bytes({0x2A}) +
                              bytes({static_cast<int>(0x80 | (summary.size() & 0x7F)),
                                     static_cast<int>(summary.size() >> 7)}) +
                              summary;
    CHECK_THROWS_WITH(decode_tensor_event(event, nullptr, "f", 0),
                      Catch::Contains("the shape has 1000 dimensions, more than the 64 a tensor may have"));
}

TEST_CASE("event: every dtype and shape round-trips (0-d, 1-D, N-D, empty)") {
    const std::vector<tensor_value::shape_type> shapes{{}, {1}, {7}, {2, 3}, {2, 1, 3, 2}, {0}, {3, 0, 2}};
    int checked = 0;
    for (dtype type : every_dtype) {
        for (const auto& shape : shapes) {
            tensor_event ev;
            ev.step = 12345678901;
            ev.wall_time = 1700000000.123456;
            ev.tag = "layer/" + std::string(dtype_name(type));
            ev.value = make_value(type, shape);
            ev.mode = mode::predict;
            ev.mode_step = 42;
            const std::string payload = encode_tensor_event(ev);
            const tensor_event back = decode_tensor_event(payload, nullptr, "f", 0);
            INFO(dtype_name(type) << " of " << shape.size() << " dims");
            CHECK(back.step == ev.step);
            CHECK(back.wall_time == ev.wall_time);
            CHECK(back.tag == ev.tag);
            CHECK(back.mode == mode::predict);
            CHECK(back.mode_step == 42);
            CHECK(same_value(back.value, ev.value));
            CHECK(encode_tensor_event(back) == payload);
            // The hook's path (the payload as pieces over the tensor's memory, framed as it
            // goes) gives the same record as framing the payload.
            std::string framed = "xy";
            append_record(framed, payload, footer_kind::smdebug_constant);
            CHECK(tdbg::format::detail::encode_tensor_event_pieces(ev).size() == payload.size());
            CHECK(tdbg::test::framed_by_pieces(ev, "xy") == framed);
            // A small record's path: encoded straight into the step's block, framed in place.
            CHECK(tdbg::test::framed_in_place(ev, "xy") == framed);
            ++checked;
        }
    }
    CHECK(checked == 16 * 7);
}

TEST_CASE("event: decoded values view the payload when aligned, and copy without keep_alive") {
    tensor_event ev;
    ev.tag = "w";
    ev.value = tensor_value(std::vector<std::uint8_t>{1, 2, 3, 4, 5});
    auto buffer = std::make_shared<std::string>(encode_tensor_event(ev));
    const std::string_view payload(*buffer);
    auto inside = [&](const tensor_value& v) {
        const char* p = v.bytes().data();
        return p >= payload.data() && p < payload.data() + payload.size();
    };
    const tensor_event viewed = decode_tensor_event(payload, buffer, "f", 0);
    CHECK(inside(viewed.value)); // uint8 is always aligned
    const tensor_event copied = decode_tensor_event(payload, nullptr, "f", 0);
    CHECK_FALSE(inside(copied.value));
    CHECK(viewed.value.bytes() == copied.value.bytes());
    std::weak_ptr<std::string> watch = buffer;
    buffer.reset();
    CHECK_FALSE(watch.expired()); // the view keeps the buffer alive
    CHECK(viewed.value.bytes() == std::string("\x01\x02\x03\x04\x05"));
}

TEST_CASE("event: typed repeated fields, packed or not, decode for every numeric dtype") {
    using format::detail::encode_message;
    // A TensorProto of `count` elements with values given by `fill`, wrapped in an Event.
    auto event_with = [](int dtype_number, std::size_t count, auto fill) {
        return encode_message([&](auto& e) {
            e.message_field(5, [&](auto& s) {
                s.message_field(1, [&](auto& v) {
                    v.bytes_field(1, "x");
                    v.message_field(8, [&](auto& t) {
                        t.varint_field(1, static_cast<std::uint64_t>(dtype_number));
                        t.message_field(2, [&](auto& shape) {
                            shape.message_field(2, [&](auto& dim) { dim.varint_field(1, count); });
                        });
                        fill(t);
                    });
                });
            });
        });
    };
    auto packed_varints = [](auto& t, int field, const std::vector<std::uint64_t>& values) {
        t.message_field(static_cast<std::uint32_t>(field), [&](auto& p) {
            for (std::uint64_t v : values) {
                p.raw_varint(v);
            }
        });
    };
    auto decode = [](const std::string& payload) { return decode_tensor_event(payload, nullptr, "f", 0).value; };

    const tensor_value f32 = decode(event_with(1, 3, [](auto& t) {
        t.float_field(5, 1.5F);
        t.message_field(5, [](auto& p) {
            p.raw_fixed(format::detail::bits_of(-2.0F), 4), p.raw_fixed(format::detail::bits_of(3.0F), 4);
        });
    }));
    CHECK(std::vector<float>(f32.data_as<float>(), f32.data_as<float>() + 3) == std::vector<float>{1.5F, -2.0F, 3.0F});

    const tensor_value f64 =
        decode(event_with(2, 2, [](auto& t) { t.double_field(6, 0.25), t.double_field(6, -8.0); }));
    CHECK(f64.data_as<double>()[0] == 0.25);
    CHECK(f64.data_as<double>()[1] == -8.0);

    const std::uint64_t minus_one = ~std::uint64_t{0};
    const tensor_value i32 = decode(event_with(3, 3, [&](auto& t) { packed_varints(t, 7, {1, minus_one, 70000}); }));
    CHECK(i32.type() == dtype::int32);
    CHECK(i32.data_as<std::int32_t>()[1] == -1);
    CHECK(i32.data_as<std::int32_t>()[2] == 70000);
    const tensor_value i8 =
        decode(event_with(6, 2, [&](auto& t) { t.varint_field(7, minus_one), t.varint_field(7, 100); }));
    CHECK(i8.data_as<std::int8_t>()[0] == -1);
    CHECK(i8.data_as<std::int8_t>()[1] == 100);
    const tensor_value u8 = decode(event_with(4, 2, [&](auto& t) { packed_varints(t, 7, {255, 7}); }));
    CHECK(u8.data_as<std::uint8_t>()[0] == 255);
    const tensor_value i16 = decode(event_with(5, 1, [&](auto& t) { packed_varints(t, 7, {minus_one - 299}); }));
    CHECK(i16.data_as<std::int16_t>()[0] == -300);
    const tensor_value u16 = decode(event_with(17, 1, [&](auto& t) { packed_varints(t, 7, {65535}); }));
    CHECK(u16.data_as<std::uint16_t>()[0] == 65535);
    const tensor_value i64 = decode(event_with(9, 2, [&](auto& t) {
        packed_varints(t, 10, {minus_one, 1ULL << 40U});
    }));
    CHECK(i64.data_as<std::int64_t>()[0] == -1);
    CHECK(i64.data_as<std::int64_t>()[1] == (std::int64_t{1} << 40));
    const tensor_value u32 = decode(event_with(22, 1, [&](auto& t) { packed_varints(t, 16, {4000000000U}); }));
    CHECK(u32.data_as<std::uint32_t>()[0] == 4000000000U);
    const tensor_value u64 = decode(event_with(23, 1, [&](auto& t) { t.varint_field(17, minus_one); }));
    CHECK(u64.data_as<std::uint64_t>()[0] == minus_one);
    const tensor_value b = decode(event_with(10, 3, [&](auto& t) { packed_varints(t, 11, {1, 0, 1}); }));
    CHECK(b.bytes() == std::string("\x01\x00\x01", 3));
    const tensor_value h = decode(event_with(19, 2, [&](auto& t) { packed_varints(t, 13, {0x3C00, 0xC000}); }));
    CHECK(h.data_as<float16>()[0].value() == 1.0F);
    CHECK(h.data_as<float16>()[1].value() == -2.0F);
    const tensor_value bf = decode(event_with(14, 1, [&](auto& t) { t.varint_field(13, 0x3F80); }));
    CHECK(bf.data_as<bfloat16>()[0].value() == 1.0F);
    const tensor_value c64 = decode(event_with(8, 1, [](auto& t) { t.float_field(9, 1.0F), t.float_field(9, -1.0F); }));
    CHECK(c64.data_as<std::complex<float>>()[0] == std::complex<float>(1.0F, -1.0F));
    const tensor_value c128 = decode(event_with(18, 1, [](auto& t) {
        t.message_field(12, [](auto& p) {
            p.raw_fixed(format::detail::bits_of(2.0), 8), p.raw_fixed(format::detail::bits_of(0.5), 8);
        });
    }));
    CHECK(c128.data_as<std::complex<double>>()[0] == std::complex<double>(2.0, 0.5));

    // Too few or too many values for the shape, or an odd complex list, are errors (no silent fill).
    CHECK_THAT(decode_error(event_with(1, 4, [](auto& t) { t.float_field(5, 1.0F); })),
               Catch::Contains("1 typed values for a float32 tensor of 4 elements"));
    CHECK_THAT(decode_error(event_with(8, 1, [](auto& t) { t.float_field(9, 1.0F); })), Catch::Contains("odd number"));

    // Only the dtype's field is read, wherever its values lie among others: those of the other
    // typed fields are checked and counted, never kept.
    const tensor_value mixed = decode(event_with(1, 3, [&](auto& t) {
        t.float_field(5, 1.0F);
        packed_varints(t, 10, {1, 2, 3, 4, 5});
        t.double_field(6, 9.0);
        t.message_field(5, [](auto& p) {
            p.raw_fixed(format::detail::bits_of(2.0F), 4), p.raw_fixed(format::detail::bits_of(3.0F), 4);
        });
    }));
    CHECK(std::vector<float>(mixed.data_as<float>(), mixed.data_as<float>() + 3) ==
          std::vector<float>{1.0F, 2.0F, 3.0F});
    CHECK_THAT(decode_error(event_with(1, 1, [](auto& t) { t.float_field(5, 1.0F), t.float_field(6, 1.0F); })),
               Catch::Contains("field 6 (double_val) has wire type 5 (fixed32), expected 1 (fixed64)"));
}

TEST_CASE("event: corrupt tensor records are errors naming file, offset and tensor") {
    tensor_event ev;
    ev.tag = "bad";
    ev.step = 2;
    ev.value = tensor_value(std::vector<double>{1.0, 2.0});
    ev.mode = mode::train;
    ev.mode_step = 2;
    const std::string good = encode_tensor_event(ev);

    // A nested length (the tensor_content's) that claims more bytes than its message holds.
    std::string bad_length = good;
    const std::size_t content = bad_length.find(bytes({0x22, 0x10}));
    REQUIRE(content != std::string::npos);
    bad_length[content + 1] = 0x50;
    CHECK(decode_error(bad_length, 500) ==
          "events/e.tfevents at byte " + std::to_string(500 + content + 1) +
              ": TensorProto: field 4 (tensor_content) claims 80 bytes, but only 16 remain");

    // tensor_content of the wrong size for the shape.
    std::string short_content = good;
    const std::size_t dim = short_content.find(bytes({0x08, 0x02, 0x12, 0x05}));
    REQUIRE(dim != std::string::npos);
    short_content[dim + 1] = 0x03;
    CHECK_THAT(decode_error(short_content), Catch::StartsWith("events/e.tfevents at byte ") &&
                                                Catch::Contains("tensor 'bad'") &&
                                                Catch::Contains("16 bytes, a float64 tensor of 3 elements needs 24"));

    // An unsupported dtype (DT_QINT8 = 11).
    std::string qint = good;
    const std::size_t dtype_at = qint.find(bytes({0x08, 0x02, 0x12, 0x0B}));
    REQUIRE(dtype_at != std::string::npos);
    qint[dtype_at + 1] = 11;
    CHECK_THAT(decode_error(qint), Catch::Contains("unsupported dtype 11"));

    // A wrong wire type for the tag.
    std::string wire = good;
    const std::size_t tag_at = wire.find(bytes({0x0A, 0x03, 'b', 'a', 'd'}));
    REQUIRE(tag_at != std::string::npos);
    wire[tag_at] = 0x08; // field 1 as a varint: 0x03 then bytes that do not parse as fields
    CHECK_THAT(decode_error(wire), Catch::StartsWith("events/e.tfevents at byte "));

    // A mode outside 1..4, and a mode step that is not a number.
    std::string bad_mode = good;
    bad_mode[bad_mode.size() - 1] = '7';
    CHECK_THAT(decode_error(bad_mode), Catch::Contains("mode plugin content '7'"));
    std::string bad_step = good;
    bad_step[bad_step.find("mode_step") + 11] = 'x';
    CHECK_THAT(decode_error(bad_step), Catch::Contains("mode_step plugin content 'x'"));

    // More dimensions than a tensor may have (numpy's 64): an error, so that nothing that walks a
    // shape (nested JSON values in tdbg dump, reports) recurses 60,000 levels deep.
    const std::vector<double> one{1.0};
    for (const std::size_t rank : {std::size_t{64}, std::size_t{65}, std::size_t{60000}}) {
        INFO("rank " << rank);
        tensor_event deep = ev;
        deep.value = tensor_value::borrow(one.data(), tensor_value::shape_type(rank, 1));
        const std::string encoded = encode_tensor_event(deep);
        if (rank <= tdbg::max_tensor_rank) {
            CHECK(decode_tensor_event(encoded, nullptr, "f", 0).value.shape().size() == rank);
        } else {
            CHECK_THAT(decode_error(encoded), Catch::Contains("tensor 'bad'") &&
                                                  Catch::Contains(std::to_string(rank) + " dimensions, more than the 64"));
        }
    }

    // Truncated anywhere: always a format_error, never a crash.
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
        CHECK_THROWS_AS(decode_tensor_event(std::string_view(good).substr(0, cut), nullptr, "f", 0), format_error);
    }
}

TEST_CASE("event: TensorBoard scalar, histogram and file_version events") {
    const std::string scalar = encode_scalar_event(2.0, 7, "loss", 0.0F);
    const double two = 2.0;
    const std::string expected =
        bytes({0x09}) + le_bytes(&two, 8) +
        bytes({0x10, 0x07, 0x2A, 0x0D, 0x0A, 0x0B, 0x0A, 0x04, 'l', 'o', 's', 's', 0x15, 0, 0, 0, 0});
    CHECK(scalar == expected); // simple_value 0 is written: it is a oneof member
    const event e = decode_event(scalar, "tb", 0);
    CHECK(e.wall_time == 2.0);
    CHECK(e.step == 7);
    REQUIRE(e.values.size() == 1);
    CHECK(e.values[0].tag == "loss");
    CHECK(e.values[0].simple_value == 0.0F);
    CHECK_FALSE(e.values[0].tensor);
    CHECK_THROWS_WITH(decode_tensor_event(scalar, nullptr, "tb", 10),
                      Catch::StartsWith("tb at byte 10: expected an Event with one tensor summary"));

    histogram h;
    h.min = -1;
    h.max = 2;
    h.num = 3;
    h.sum = 1;
    h.sum_squares = 0; // omitted on the wire, read back as 0
    h.bucket_limit = {0.0, 1.0, 2.0};
    h.bucket = {1, 0, 2};
    const std::string histo = encode_histogram_event(3.5, 1, "w", h);
    CHECK_THAT(histo, Catch::Contains(bytes({0x32, 0x18}))); // bucket_limit: packed, 24 bytes
    CHECK_THAT(histo, !Catch::Contains(bytes({0x29}) + std::string(8, '\0')));
    const event he = decode_event(histo, "tb", 0);
    REQUIRE(he.values.size() == 1);
    REQUIRE(he.values[0].histo);
    CHECK(*he.values[0].histo == h);

    const std::string version = encode_file_version_event(10.0);
    const event ve = decode_event(version, "tb", 0);
    CHECK(ve.file_version == std::string("brain.Event:2"));
    CHECK_FALSE(ve.has_summary);
    CHECK(version.substr(9) == bytes({0x1A, 0x0D}) + "brain.Event:2");
}

TEST_CASE("event: randomly corrupted payloads decode or fail with format_error, nothing else") {
    std::vector<std::string> payloads;
    for (dtype type : every_dtype) {
        tensor_event ev;
        ev.step = 9;
        ev.wall_time = 3.25;
        ev.tag = "fuzz";
        ev.value = make_value(type, {2, 3});
        ev.mode = mode::eval;
        ev.mode_step = 4;
        payloads.push_back(encode_tensor_event(ev));
    }
    std::uint32_t state = 12345;
    auto next = [&state] { // a small LCG: the same sequence on every platform
        state = state * 1664525U + 1013904223U;
        return state >> 8U;
    };
    int decoded = 0;
    int rejected = 0;
    for (int i = 0; i < 4000; ++i) {
        std::string data = payloads[next() % payloads.size()];
        for (std::uint32_t k = 0, n = 1 + next() % 3; k < n && !data.empty(); ++k) {
            const std::size_t at = next() % data.size();
            switch (next() % 3) {
            case 0: data[at] = static_cast<char>(next()); break;
            case 1: data.resize(at); break;
            default: data.insert(at, 1, static_cast<char>(next())); break;
            }
        }
        try {
            const tensor_event ev = decode_tensor_event(data, nullptr, "fuzz.tfevents", 0);
            // Allocation is bounded by the input: a one-byte varint widens to at most an 8-byte element.
            CHECK(ev.value.nbytes() <= data.size() * 8);
            ++decoded;
        } catch (const format_error& e) {
            CHECK_THAT(e.what(), Catch::StartsWith("fuzz.tfevents at byte "));
            ++rejected;
        }
    }
    CHECK(decoded > 0);
    CHECK(rejected > 0);
}
