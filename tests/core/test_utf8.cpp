// The one UTF-8 check (strict: no overlong forms, surrogates or truncations),
// terminal_safe, which escapes what a name from a run must not do to a terminal, and
// markup_escape, which keeps it from making an XML document ill-formed.

#include <catch2/catch.hpp>

#include <string>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/text.hpp"

// The public escapes (tdbg/core/text.hpp); the library's own code calls their detail versions.
using tdbg::detail::decode_utf8;
using tdbg::markup_escape;
using tdbg::terminal_safe;

TEST_CASE("utf8: valid characters decode, overlong forms, surrogates and truncations do not") {
    CHECK(decode_utf8("A", 0).code_point == 0x41);
    CHECK(decode_utf8("\xc3\xa9", 0).code_point == 0xE9);
    CHECK(decode_utf8("\xc3\xa9", 0).length == 2);
    CHECK(decode_utf8("\xf0\x9f\x98\x80", 0).code_point == 0x1F600);
    CHECK(decode_utf8("\xc0\x80", 0).length == 0);     // overlong NUL
    CHECK(decode_utf8("\xed\xa0\x80", 0).length == 0); // a surrogate
    CHECK(decode_utf8("\xf4\x90\x80\x80", 0).length == 0); // past U+10FFFF
    CHECK(decode_utf8("\xe2\x82", 0).length == 0);     // truncated
}

TEST_CASE("utf8: terminal_safe escapes controls and bytes that are not UTF-8, and keeps the rest") {
    CHECK(terminal_safe("layer_0/weight") == "layer_0/weight");
    CHECK(terminal_safe("caf\xc3\xa9 \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xf0\x9f\x98\x80");
    CHECK(terminal_safe("a\x1b[2Jb") == "a\\x1b[2Jb");           // ESC: no escape sequence reaches the terminal
    CHECK(terminal_safe("a\rb\nc\td\a") == "a\\x0db\\x0ac\\x09d\\x07");
    CHECK(terminal_safe("del\x7f") == "del\\x7f");
    CHECK(terminal_safe("csi\xc2\x9b" "2J") == "csi\\xc2\\x9b2J"); // U+009B, a one-character CSI
    CHECK(terminal_safe("nbsp\xc2\xa0") == "nbsp\xc2\xa0");        // U+00A0 is printable
    CHECK(terminal_safe("bad\xff\xc3") == "bad\\xff\\xc3");         // not UTF-8
    CHECK(terminal_safe(std::string("nul\0!", 5)) == "nul\\x00!");
    CHECK(terminal_safe("").empty());
    // Bidirectional controls: U+202E would show "gnp.exe" as "exe.png"; a byte each escaped.
    CHECK(terminal_safe("rtl\xe2\x80\xaegnp.exe") == "rtl\\xe2\\x80\\xaegnp.exe");
    CHECK(terminal_safe("\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x81\xa6\xe2\x81\xa9") ==
          "\\xd8\\x9c\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xe2\\x80\\xaa\\xe2\\x81\\xa6\\xe2\\x81\\xa9");
    CHECK(terminal_safe("\xe2\x80\xa9\xe2\x81\xaa") == "\xe2\x80\xa9\xe2\x81\xaa"); // U+2029, U+206A: kept
}

TEST_CASE("markup_escape: what XML 1.0 cannot hold becomes U+FFFD, the rest is kept") {
    CHECK(markup_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
    // Noncharacters U+FFFE and U+FFFF, C0 controls, and bytes that are not UTF-8 (a lone
    // continuation byte, a surrogate's encoding, a truncated character): one U+FFFD each.
    CHECK(markup_escape("w\xef\xbf\xbe\xef\xbf\xbf\x01\x1b") == "w&#xFFFD;&#xFFFD;&#xFFFD;&#xFFFD;");
    CHECK(markup_escape("\x80|\xed\xa0\x80|\xe2\x82") == "&#xFFFD;|&#xFFFD;&#xFFFD;&#xFFFD;|&#xFFFD;&#xFFFD;");
    // What XML 1.0 allows is kept as it is: tab, newline, carriage return, DEL, C1 controls,
    // U+FFFD, the other noncharacters and the planes above the BMP.
    const std::string kept = "\t\n\r\x7f\xc2\x85\xef\xbf\xbd\xef\xb7\x90\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf";
    CHECK(markup_escape(kept) == kept);
}

TEST_CASE("shape_text: a shape as the command line shows it, or as Python writes it") {
    CHECK(tdbg::shape_text({3, 4}) == "[3, 4]");
    CHECK(tdbg::shape_text({}) == "[]");
    CHECK(tdbg::shape_text({7}) == "[7]");
    CHECK(tdbg::shape_text({3, 4}, tdbg::shape_style::tuple) == "(3, 4)");
    CHECK(tdbg::shape_text({7}, tdbg::shape_style::tuple) == "(7,)");
    CHECK(tdbg::shape_text({}, tdbg::shape_style::tuple) == "()");
    CHECK(tdbg::shape_text({0, 18446744073709551615ULL}) == "[0, 18446744073709551615]");
}
