#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "tdbg/format/crc32c.hpp"
#include "tdbg/format/tfrecord.hpp"

using namespace tdbg;
using namespace tdbg::format;

namespace {

std::uint32_t le32_at(const std::string& s, std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) {
        v = (v << 8U) | static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)]);
    }
    return v;
}

std::string two_records() {
    std::string file;
    append_record(file, "first payload", footer_kind::smdebug_constant);
    append_record(file, std::string(300, 'x'), footer_kind::payload_crc);
    return file;
}

// Runs the reader to the end and returns the message of the error it throws.
std::string read_all_error(const std::string& data, const std::string& file) {
    record_reader reader(data, file);
    try {
        while (reader.next()) {}
    } catch (const format_error& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST_CASE("append_record lays out length, length CRC, payload and footer") {
    std::string out = "prefix";
    append_record(out, "hello", footer_kind::smdebug_constant);
    REQUIRE(out.size() == 6 + 5 + record_overhead);
    const std::string header = out.substr(6, 8);
    CHECK(header == std::string("\x05\0\0\0\0\0\0\0", 8));
    CHECK(le32_at(out, 14) == masked_crc32c(header));
    CHECK(out.substr(18, 5) == "hello");
    CHECK(le32_at(out, 23) == 0x062dc0b3U);

    std::string tb;
    append_record(tb, "hello", footer_kind::payload_crc);
    CHECK(le32_at(tb, 17) == masked_crc32c("hello"));
    CHECK(tb.substr(0, 17) == out.substr(6, 17)); // only the footer differs
}

TEST_CASE("record_reader returns every record with its offset, for both footer kinds") {
    const std::string file = two_records();
    record_reader reader(file, "events/x.tfevents");
    auto first = reader.next();
    REQUIRE(first);
    CHECK(first->offset == 0);
    CHECK(first->payload == "first payload");
    CHECK(first->payload_offset() == 12);
    CHECK(first->size() == 13 + 16);
    auto second = reader.next();
    REQUIRE(second);
    CHECK(second->offset == 29);
    CHECK(second->payload == std::string(300, 'x'));
    CHECK_FALSE(reader.next());
    CHECK_FALSE(reader.next());

    record_reader empty("", "empty.tfevents");
    CHECK_FALSE(empty.next());
}

TEST_CASE("record_payload checks one indexed record") {
    const std::string file = two_records();
    CHECK(record_payload(std::string_view(file).substr(0, 29), "f", 0) == "first payload");
    CHECK(record_payload(std::string_view(file).substr(29), "f", 29) == std::string(300, 'x'));
    // An index entry one byte too long or too short.
    CHECK_THROWS_WITH(record_payload(std::string_view(file).substr(0, 30), "events/f.tfevents", 0),
                      Catch::Contains("events/f.tfevents at byte 0") && Catch::Contains("does not match"));
    CHECK_THROWS_WITH(record_payload(std::string_view(file).substr(29, 10), "events/f.tfevents", 29),
                      Catch::Contains("events/f.tfevents at byte 29") && Catch::Contains("truncated"));
}

TEST_CASE("truncated files are reported with file and offset") {
    const std::string file = two_records();
    // Cut inside the second record's header, then inside its payload, then its footer.
    CHECK(read_all_error(file.substr(0, 35), "events/a.tfevents") ==
          "events/a.tfevents at byte 29: truncated record header: 6 bytes left, 12 needed");
    CHECK_THAT(read_all_error(file.substr(0, 29 + 12 + 100), "events/a.tfevents"),
               Catch::StartsWith("events/a.tfevents at byte 29: truncated record: payload length 300"));
    CHECK_THAT(read_all_error(file.substr(0, file.size() - 1), "events/a.tfevents"),
               Catch::StartsWith("events/a.tfevents at byte 29: truncated record"));
}

TEST_CASE("a bit flipped in the length fails the length CRC before the length is used") {
    std::string file = two_records();
    file[29 + 5] = static_cast<char>(file[29 + 5] ^ 0x40); // a huge length
    CHECK_THAT(read_all_error(file, "events/b.tfevents"),
               Catch::StartsWith("events/b.tfevents at byte 29: corrupt record header: the length's CRC"));
    std::string first = two_records();
    first[0] = static_cast<char>(first[0] ^ 1);
    CHECK_THAT(read_all_error(first, "events/b.tfevents"), Catch::StartsWith("events/b.tfevents at byte 0: corrupt"));
}

TEST_CASE("footers: smdebug's constant is accepted, a true CRC is verified, anything else fails") {
    std::string file = two_records();
    // Corrupt the payload of the record with a true CRC: detected.
    std::string flipped = file;
    flipped[29 + 12 + 7] = 'y';
    CHECK_THAT(read_all_error(flipped, "tensorboard/t"),
               Catch::Contains("tensorboard/t at byte 29") && Catch::Contains("footer"));
    // A footer that is neither form.
    std::string bad_footer = file;
    bad_footer[28] = static_cast<char>(bad_footer[28] ^ 0x10);
    CHECK_THAT(read_all_error(bad_footer, "events/c.tfevents"),
               Catch::StartsWith("events/c.tfevents at byte 0: corrupt record: the footer is") &&
                   Catch::Contains("0x062dc0b3"));
    // The first record's payload can change under the constant footer: smdebug's format cannot tell.
    std::string constant = file;
    constant[12] = 'F';
    record_reader reader(constant, "x");
    CHECK(reader.next()->payload == "First payload");
}
