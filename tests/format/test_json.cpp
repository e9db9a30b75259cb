// The library's one JSON reader and writer (tdbg/format/json.hpp): Python's
// json.dumps layout byte for byte, and a reader that takes what json.loads
// takes (NaN and Infinity included), refuses the rest with the byte offset,
// and never recurses or allocates without bound.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"

using tdbg::format::dump_json;
using tdbg::format::json_style;
using tdbg::format::json_value;
using tdbg::format::parse_json;

namespace {

json_style golden_style() {
    json_style s;
    s.indent = 1;
    s.sort_keys = true;
    return s;
}

// The offset a parse error names, or -1 when the text parses.
std::int64_t error_offset(const std::string& text) {
    try {
        (void)parse_json(text, "t.json");
    } catch (const tdbg::format_error& e) {
        return static_cast<std::int64_t>(e.offset());
    }
    return -1;
}

} // namespace

TEST_CASE("json: floats as Python's repr") {
    using tdbg::format::python_float_repr;
    // Expected strings are Python 3's repr() of the same doubles.
    CHECK(python_float_repr(0.0) == "0.0");
    CHECK(python_float_repr(-0.0) == "-0.0");
    CHECK(python_float_repr(1.0) == "1.0");
    CHECK(python_float_repr(0.1) == "0.1");
    CHECK(python_float_repr(-2.5) == "-2.5");
    CHECK(python_float_repr(123456.0) == "123456.0");
    CHECK(python_float_repr(1e15) == "1000000000000000.0");
    CHECK(python_float_repr(1e16) == "1e+16");
    CHECK(python_float_repr(1.5e300) == "1.5e+300");
    CHECK(python_float_repr(0.0001) == "0.0001");
    CHECK(python_float_repr(0.00001) == "1e-05");
    CHECK(python_float_repr(-1.25e-7) == "-1.25e-07");
    CHECK(python_float_repr(5e-324) == "5e-324");
    CHECK(python_float_repr(static_cast<double>(0.1F)) == "0.10000000149011612");
    CHECK(python_float_repr(1.7976931348623157e308) == "1.7976931348623157e+308");
    CHECK(python_float_repr(10000000000.0) == "10000000000.0");
    CHECK(python_float_repr(std::numeric_limits<double>::quiet_NaN()) == "NaN");
    CHECK(python_float_repr(-std::numeric_limits<double>::infinity()) == "-Infinity");
}

TEST_CASE("json: strings as json.dumps writes them (ensure_ascii), invalid UTF-8 refused or replaced") {
    std::string out;
    tdbg::format::append_json_string(out, "a\"b\\c\n\x01\x7f caf\xc3\xa9 \xf0\x9f\x98\x80");
    CHECK(out == "\"a\\\"b\\\\c\\n\\u0001\\u007f caf\\u00e9 \\ud83d\\ude00\"");
    // Overlong forms, surrogates and truncated sequences are not UTF-8.
    for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xff", "\xf4\x90\x80\x80"}) {
        INFO(bad);
        std::string ignored;
        CHECK_THROWS_AS(tdbg::format::append_json_string(ignored, bad), tdbg::error);
        std::string replaced;
        tdbg::format::append_json_string(replaced, std::string("x") + bad, true);
        CHECK(replaced.rfind("\"x\\ufffd", 0) == 0);
    }
}

TEST_CASE("json: a character that needs escaping is found at every place of a long string") {
    // Strings long enough for the eight-bytes-at-a-time scan, with one character that needs a
    // look at each place; the expected text escapes that character alone (a string shorter than
    // eight bytes, scanned byte by byte).
    const auto escaped = [](const std::string& text) {
        std::string out;
        tdbg::format::append_json_string(out, text);
        return out.substr(1, out.size() - 2);
    };
    std::size_t checked = 0;
    for (const std::string special : {"\"", "\\", "\n", "\x1f", "\x7f", "\xc3\xa9", "\x01", " ", "~"}) {
        for (std::size_t at = 0; at <= 24; ++at) {
            const std::string before(at, 'a');
            const std::string after(24 - at, 'z');
            INFO("'" << special << "' at " << at);
            CHECK(escaped(before + special + after) == before + escaped(special) + after);
            ++checked;
        }
    }
    CHECK(checked == 9 * 25);
}

TEST_CASE("json: documents laid out as json.dumps(indent=1, sort_keys=True), and on one line") {
    const json_value doc = parse_json(R"({"b": [1, 2.5, {"z": null, "a": true}], "a": {}, "c": [], "d": -7})");
    CHECK(dump_json(doc, golden_style()) ==
          "{\n \"a\": {},\n \"b\": [\n  1,\n  2.5,\n  {\n   \"a\": true,\n   \"z\": null\n  }\n ],\n \"c\": [],\n \"d\": -7\n}");
    CHECK(dump_json(doc) == R"({"b": [1, 2.5, {"z": null, "a": true}], "a": {}, "c": [], "d": -7})");
}

TEST_CASE("json: numbers keep their kind, and integers are exact up to 64 bits") {
    const json_value doc = parse_json(R"([0, -9223372036854775808, 18446744073709551615, 18446744073709551616, 1.5e3, NaN, -Infinity])");
    REQUIRE(doc.size() == 7);
    CHECK(doc.items()[0].type() == json_value::kind::integer);
    CHECK(doc.items()[1].as_int64() == std::numeric_limits<std::int64_t>::min());
    CHECK(doc.items()[2].as_uint64() == std::numeric_limits<std::uint64_t>::max());
    CHECK(doc.items()[3].type() == json_value::kind::real); // past 64 bits: a float, as Python's float()
    CHECK(doc.items()[4].as_double() == 1500.0);
    CHECK(std::isnan(doc.items()[5].as_double()));
    CHECK(doc.items()[6].as_double() == -std::numeric_limits<double>::infinity());
    CHECK_THROWS_AS(doc.items()[4].as_int64(), tdbg::format_error);
    // Python compares numbers by value.
    CHECK(parse_json("1") == parse_json("1.0"));
    CHECK(parse_json(R"({"a": 1, "b": [2]})") == parse_json(R"({"b": [2.0], "a": 1})"));
    CHECK(parse_json("[1, 2]") != parse_json("[2, 1]"));
}

TEST_CASE("json: escapes and surrogate pairs decode to UTF-8, and a repeated key keeps the last value") {
    const json_value doc = parse_json(R"({"k": "caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \t", "k": "last", "x": "\u0041"})");
    REQUIRE(doc.size() == 2);
    CHECK(doc.find("k")->as_string() == "last");
    CHECK(doc.find("x")->as_string() == "A");
    CHECK(parse_json(R"("caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \t")").as_string() == "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ / \t");
    CHECK(parse_json("\"caf\xc3\xa9\"").as_string() == "caf\xc3\xa9");
}

TEST_CASE("json: strings are read eight bytes at a time, yet every special byte is found wherever it sits") {
    // Plain bytes are skipped a word at a time: a quote, a backslash, a control byte or a
    // UTF-8 byte at any position of a string of any length must still be seen.
    for (std::size_t length = 0; length <= 20; ++length) {
        const std::string plain = std::string(length, 'a');
        INFO("length " << length);
        CHECK(parse_json('"' + plain + '"').as_string() == plain);
        for (std::size_t at = 0; at < length; ++at) {
            INFO("at " << at);
            std::string escaped = plain;
            escaped.replace(at, 1, "\\n");
            CHECK(parse_json('"' + escaped + '"').as_string() == plain.substr(0, at) + "\n" + plain.substr(at + 1));
            std::string utf8 = plain;
            utf8.replace(at, 1, "\xc3\xa9");
            CHECK(parse_json('"' + utf8 + '"').as_string() == utf8);
            std::string control = plain;
            control[at] = '\x1f';
            CHECK(error_offset('"' + control + '"') == static_cast<std::int64_t>(at) + 1);
            std::string invalid = plain;
            invalid[at] = '\xff';
            CHECK(error_offset('"' + invalid + '"') == static_cast<std::int64_t>(at) + 1);
            std::string cut = plain;
            cut[at] = '"'; // the string ends there, and what follows is not JSON
            CHECK(error_offset('"' + cut + '"') == static_cast<std::int64_t>(at) + 2);
        }
    }
}

TEST_CASE("json: what is not JSON is refused at its byte offset") {
    CHECK(error_offset("") == 0);
    CHECK(error_offset("[1, 2,]") == 5);       // the trailing comma
    CHECK(error_offset("{\"a\" 1}") == 5);     // the missing colon
    CHECK(error_offset("[1] x") == 4);         // something after the document
    CHECK(error_offset("01") == 0);            // a leading zero
    CHECK(error_offset("\"\\ud800\"") == 7);   // a lone high surrogate
    CHECK(error_offset("\"\\udc00\"") == 7);   // a lone low surrogate
    CHECK(error_offset("\"a\tb\"") == 2);      // a raw control character
    CHECK(error_offset("\"\xed\xa0\x80\"") == 1); // a surrogate written in UTF-8
    CHECK(error_offset("\"abc") == 0);         // a string not closed
    CHECK(error_offset("tru") == 0);
    CHECK(error_offset("1e999") == 0);         // out of the range of a double
    CHECK(error_offset(std::string("[1\0]", 4)) == 2);
    try {
        (void)parse_json("[1, 2,]", "runs/a/collections.json", "collections file");
        FAIL("parsed");
    } catch (const tdbg::format_error& e) {
        CHECK(std::string(e.what()) == "runs/a/collections.json at byte 5: collections file is not valid JSON: a trailing "
                                      "',' before ']'");
        CHECK(e.file() == "runs/a/collections.json");
    }
}

TEST_CASE("json: nesting is bounded, so that no input recurses without limit") {
    CHECK(error_offset(std::string(512, '[') + std::string(512, ']')) == -1);
    CHECK(error_offset(std::string(513, '[') + std::string(513, ']')) == 512);
    CHECK(error_offset(std::string(10'000'000, '[')) == 512); // stops there, without reading on
}

TEST_CASE("json: what nlohmann's parser reads, tdbg's reads the same (json.loads's extras apart)") {
    const std::vector<std::string> documents{
        R"({"collections": {"w": {"name": "w", "include_regex": ["^(?!gradient).*weight"], "tensor_names": []}}, "_meta": {"num_workers": 2}})",
        R"([true, false, null, -0.0, 1e-7, 12345678901234, "\u00fc\n", [], {}, [[[]]]])",
        " \t\r\n{ \"a\" : [ 1 , 2 ] } \n",
    };
    for (const std::string& text : documents) {
        INFO(text);
        const json_value ours = parse_json(text);
        const nlohmann::json theirs = nlohmann::json::parse(text);
        CHECK(parse_json(theirs.dump()) == ours);
        CHECK(nlohmann::json::parse(dump_json(ours)) == theirs);
    }
}
