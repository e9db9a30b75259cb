#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "support.hpp"
#include "tdbg/format/detail/proto.hpp"
#include "tdbg/format/detail/proto_reader.hpp"

using tdbg::test::bytes;

using namespace tdbg;
using namespace tdbg::format::detail;

namespace {

// Reads every field of `data` as unknown, returning the error message (or "").
std::string skip_all(const std::string& data) {
    try {
        proto_reader r(data, "f.bin", 100, "Test");
        while (r.next()) {
            r.skip();
        }
    } catch (const tdbg::format_error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("proto writer: varints, fixed fields and nested lengths follow the wire format") {
    const std::string out = encode_message([](auto& w) {
        w.varint_field(1, 300); // 08 AC 02
        w.int_field(2, -1); // 10 FF FF FF FF FF FF FF FF FF 01
        w.double_field(3, 1.0); // 19 00 00 00 00 00 00 F0 3F
        w.float_field(4, -2.0F); // 25 00 00 00 C0
        w.bytes_field(5, "hi"); // 2A 02 68 69
        w.message_field(6, [](auto& inner) { // 32 05 | 08 01 12 01 7A
            inner.varint_field(1, 1);
            inner.bytes_field(2, "z");
        });
        w.varint_field_if(7, 0); // omitted
        w.double_field_if(8, 0.0); // omitted
        w.bytes_field_if(9, ""); // omitted
        w.double_field_if(10, -0.0); // -0.0 is not the default bit pattern: written
    });
    const std::string expected =
        bytes({0x08, 0xAC, 0x02}) + bytes({0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}) +
        bytes({0x19, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F}) + bytes({0x25, 0, 0, 0, 0xC0}) + bytes({0x2A, 0x02, 'h', 'i'}) +
        bytes({0x32, 0x05, 0x08, 0x01, 0x12, 0x01, 'z'}) + bytes({0x51, 0, 0, 0, 0, 0, 0, 0, 0x80});
    CHECK(out == expected);
    CHECK(varint_size(0) == 1);
    CHECK(varint_size(127) == 1);
    CHECK(varint_size(128) == 2);
    CHECK(varint_size(~std::uint64_t{0}) == 10);
}

TEST_CASE("proto writer: a nested message longer than 127 bytes gets a two-byte length") {
    const std::string payload(200, 'q');
    const std::string out = encode_message([&](auto& w) {
        w.message_field(1, [&](auto& a) { a.message_field(2, [&](auto& b) { b.bytes_field(3, payload); }); });
    });
    // 0A <len a> 12 <len b> 1A C8 01 <200 bytes>; len b = 203 (CB 01), len a = 206 (CE 01)
    CHECK(out.substr(0, 9) == bytes({0x0A, 0xCE, 0x01, 0x12, 0xCB, 0x01, 0x1A, 0xC8, 0x01}));
    CHECK(out.size() == 9 + 200);
}

TEST_CASE("proto reader: reads fields, packed and unpacked repeated values, and skips unknown fields") {
    const std::string data = bytes({0x08, 0xAC, 0x02}) + // 1: varint 300
                             bytes({0x3A, 0x03, 0x01, 0x80, 0x01}) + // 7: packed varints 1, 128
                             bytes({0x38, 0x05}) + // 7: unpacked varint 5
                             bytes({0x2D, 0, 0, 0x80, 0x3F}) + // 5: unpacked float 1.0
                             bytes({0x2A, 0x04, 0, 0, 0, 0x40}) + // 5: packed float 2.0
                             bytes({0x99, 0x06, 1, 2, 3, 4, 5, 6, 7, 8}) + // 99: unknown fixed64
                             bytes({0xA3, 0x06, 0x08, 0x01, 0xA4, 0x06}) + // 100: unknown group
                             bytes({0x12, 0x02, 'o', 'k'}); // 2: bytes
    proto_reader r(data, "f", 0, "Test");
    std::uint64_t first = 0;
    std::vector<std::int32_t> ints;
    std::vector<float> floats;
    std::string text;
    while (r.next()) {
        switch (r.field()) {
        case 1: first = r.varint("first"); break;
        case 7:
            r.repeated<std::uint64_t>(ints, "ints", [](std::uint64_t v) { return static_cast<std::int32_t>(v); });
            break;
        case 5: r.repeated<float>(floats, "floats", [](float v) { return v; }); break;
        case 2: text = std::string(r.bytes("text")); break;
        default: r.skip();
        }
    }
    CHECK(first == 300);
    CHECK(ints == std::vector<std::int32_t>{1, 128, 5});
    CHECK(floats == std::vector<float>{1.0F, 2.0F});
    CHECK(text == "ok");
}

TEST_CASE("proto reader: a wrong wire type is an error naming the field, file and offset") {
    const std::string data = bytes({0x08, 0x01, 0x0A, 0x01, 'x'}); // field 1 as varint, then as bytes
    proto_reader r(data, "events/e.tfevents", 1000, "Summary.Value");
    REQUIRE(r.next());
    CHECK_THROWS_WITH(r.bytes("tag"), "events/e.tfevents at byte 1000: Summary.Value: field 1 (tag) has wire type 0 "
                                      "(varint), expected 2 (length-delimited)");
    const std::string fixed = bytes({0x3D, 0, 0, 0, 0}); // field 7 as fixed32
    proto_reader packed(fixed, "f", 0, "TensorProto");
    REQUIRE(packed.next());
    std::vector<int> out;
    CHECK_THROWS_WITH(
        packed.repeated<std::uint64_t>(out, "int_val", [](std::uint64_t v) { return static_cast<int>(v); }),
        Catch::Contains("field 7 (int_val) has wire type 5"));
}

TEST_CASE("proto reader: lengths past the end fail before anything is allocated") {
    // Field 2 claims 2^40 bytes with three bytes present.
    const std::string huge = bytes({0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 'a', 'b', 'c'});
    CHECK(skip_all(huge) == "f.bin at byte 101: Test: field 2 (unknown) claims 1099511627776 bytes, but only 3 remain");
    CHECK_THAT(skip_all(bytes({0x08, 0x80})), Catch::Contains("at byte 101") && Catch::Contains("truncated varint"));
    CHECK_THAT(skip_all(bytes({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01})),
               Catch::Contains("varint"));
    CHECK_THAT(skip_all(bytes({0x09, 1, 2, 3})), Catch::Contains("truncated 64-bit field 1"));
    CHECK_THAT(skip_all(bytes({0x0D, 1})), Catch::Contains("truncated 32-bit field 1"));
    // Packed fixed-size values whose byte count is not a multiple of the element size.
    const std::string three = bytes({0x2A, 0x03, 0, 0, 0});
    proto_reader r(three, "f", 0, "TensorProto");
    REQUIRE(r.next());
    std::vector<float> floats;
    CHECK_THROWS_WITH(r.repeated<float>(floats, "float_val", [](float v) { return v; }),
                      Catch::Contains("3 bytes, not a multiple of 4"));
}

TEST_CASE("proto reader: invalid keys, stray group ends and over-deep nesting are rejected") {
    CHECK_THAT(skip_all(bytes({0x0E, 0x00})), Catch::Contains("invalid wire type 6"));
    CHECK_THAT(skip_all(bytes({0x0F})), Catch::Contains("invalid wire type 7"));
    CHECK_THAT(skip_all(bytes({0x00, 0x00})), Catch::Contains("invalid field number 0"));
    CHECK_THAT(skip_all(bytes({0x0C})), Catch::Contains("unexpected end-group"));
    CHECK_THAT(skip_all(bytes({0x0B, 0x08, 0x01})), Catch::Contains("not closed"));
    CHECK_THAT(skip_all(bytes({0x0B, 0x14})),
               Catch::Contains("end-group marker for field 2 closes the group of field 1"));
    // 10,000 nested groups: rejected at the depth limit, not by exhausting the stack.
    const std::string deep = std::string(10000, '\x0B') + std::string(10000, '\x0C');
    CHECK_THAT(skip_all(deep), Catch::Contains("nesting deeper than"));
    const std::string shallow = std::string(10, '\x0B') + std::string(10, '\x0C');
    CHECK(skip_all(shallow).empty());
    // Nested messages count too.
    const std::string empty_inner = bytes({0x0A, 0x00});
    proto_reader outer(empty_inner, "f", 0, "Test", max_proto_depth);
    REQUIRE(outer.next());
    CHECK_THROWS_WITH(outer.message("inner", "Inner"), Catch::Contains("nesting deeper than"));
}

TEST_CASE("wire cursor: varints, keys, fixed fields and lengths, and each malformed form declined") {
    using tdbg::format::detail::wire_cursor;
    std::uint64_t v = 0;
    // A cursor over `data`, which outlives it (a cursor views its bytes).
    std::deque<std::string> kept; // push_back keeps earlier strings where they are
    auto over = [&kept](std::string data) {
        kept.push_back(std::move(data));
        return wire_cursor(kept.back());
    };
    {
        const std::string max64 = bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01});
        wire_cursor c(max64);
        CHECK(c.varint(v));
        CHECK(v == UINT64_MAX);
        CHECK(c.at_end());
    }
    CHECK_FALSE(over(bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02})).varint(v)); // > 64 bits
    CHECK_FALSE(over(bytes({0x80, 0x80})).varint(v));                                                  // truncated
    {
        const std::string data = bytes({0x96, 0x01});
        wire_cursor c(data); // a cursor views its bytes: they must outlive it
        CHECK(c.varint(v));
        CHECK(v == 150);
        CHECK(c.position() == 2);
    }
    std::uint32_t field = 0;
    tdbg::format::detail::wire_type type{};
    CHECK(over(bytes({0x0A})).key(field, type));
    CHECK(field == 1);
    CHECK(type == tdbg::format::detail::wire_type::length_delimited);
    CHECK_FALSE(over(bytes({0x00})).key(field, type)); // field 0
    CHECK_FALSE(over(bytes({0x0E})).key(field, type)); // wire type 6
    {
        const std::string data = bytes({0x03, 'a', 'b', 'c', 0x05, 'x'});
        wire_cursor c(data); // a cursor views its bytes: they must outlive it
        std::string_view out;
        CHECK(c.length_delimited(out));
        CHECK(out == "abc");
        CHECK_FALSE(c.length_delimited(out)); // claims 5 bytes, 1 left
    }
    {
        const std::string data = bytes({0x01, 0x02, 0x03, 0x04, 0x05});
        wire_cursor c(data); // a cursor views its bytes: they must outlive it
        CHECK(c.fixed(4, v));
        CHECK(v == 0x04030201U);
        CHECK_FALSE(c.fixed(4, v));
    }
    CHECK_FALSE(over(bytes({0x0B})).skip(tdbg::format::detail::wire_type::start_group));
}

TEST_CASE("proto reader: varint errors are named as before") {
    CHECK_THAT(skip_all(bytes({0x08, 0x80})), Catch::Contains("truncated varint"));
    CHECK_THAT(skip_all(bytes({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F})),
               Catch::Contains("varint does not fit in 64 bits"));
}
