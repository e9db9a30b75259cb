#include <catch2/catch.hpp>

#include <string>

#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/core/error.hpp"

using tdbg::config_error;
using tdbg::detail::pattern;

TEST_CASE("patterns read Python re syntax and search anywhere in the name") {
    // smdebug's default collections use lookahead.
    const pattern weights("^(?!gradient).*weight", "collection 'weights'");
    CHECK(weights.search("MLP_fc1.weight"));
    CHECK_FALSE(weights.search("gradient/MLP_fc1.weight"));
    CHECK(weights.text() == "^(?!gradient).*weight");
    // Lookbehind and named groups, which ECMAScript regexes lack.
    CHECK(pattern("(?<=fc1\\.)weight", "test").search("MLP_fc1.weight"));
    CHECK_FALSE(pattern("(?<=fc1\\.)weight", "test").search("MLP_fc2.weight"));
    const pattern named("(?P<layer>fc\\d+)\\.(?P=layer)?bias", "test");
    CHECK(named.search("net/fc12.bias"));
    CHECK_FALSE(named.search("net/conv.bias"));
    // re.search: anywhere, and an empty pattern matches everything.
    CHECK(pattern("relu", "test").search("layer1/relu_output_0"));
    CHECK(pattern("", "test").search("anything"));
    CHECK(pattern("", "test").search(""));
}

TEST_CASE("patterns are Unicode-aware like Python's re on str") {
    CHECK(pattern("^\\w+$", "test").search("Gewicht_ä"));
    CHECK(pattern("(?i)ÄPFEL", "test").search("äpfel"));
    CHECK(pattern("^.{3}$", "test").search("αβγ")); // three code points, six bytes
    CHECK_FALSE(pattern("^.{6}$", "test").search("αβγ"));
}

TEST_CASE("a bad pattern names where it came from, the pattern and the offset") {
    CHECK_THROWS_AS(pattern("relu[(", "collection 'acts'"), config_error);
    CHECK_THROWS_WITH(pattern("relu[(", "collection 'acts'"),
                      Catch::Contains("collection 'acts'") && Catch::Contains("relu[(") &&
                          Catch::Contains("offset"));
    CHECK_THROWS_WITH(pattern("a(b", "rule parameter 'tensor_regex'"),
                      Catch::Contains("rule parameter 'tensor_regex'") && Catch::Contains("a(b"));
}

TEST_CASE("a runaway match is an error, not a hang") {
    // 2^40 ways to split the a's before each failure, without the limit.
    const pattern bad("(.+)+X", "rule parameter 'tensor_regex'");
    const std::string name = "X" + std::string(40, 'a');
    CHECK_THROWS_AS(bad.search(name), config_error);
    CHECK_THROWS_WITH(bad.search(name), Catch::Contains("tensor_regex") && Catch::Contains("(.+)+X") &&
                                            Catch::Contains("match limit"));
    CHECK(bad.search(name + "X")); // a match is found at once
    const pattern nested("^(a+)+$", "collection 'c'");
    CHECK_THROWS_WITH(nested.search(std::string(40, 'a') + "!"), Catch::Contains("collection 'c'"));
    CHECK(nested.search(std::string(40, 'a')));
}

TEST_CASE("long names and long patterns match without exhausting the stack") {
    const std::string name = std::string(50000, 'w') + "weight";
    CHECK(pattern("^(?!gradient).*weight", "test").search(name));
    CHECK_FALSE(pattern("^(?!gradient).*weights", "test").search(name));
    std::string alternatives;
    for (int i = 0; i < 1000; ++i) {
        alternatives += (i == 0 ? "" : "|") + std::string("layer") + std::to_string(i);
    }
    const pattern many(alternatives, "test");
    CHECK(many.search("net/layer999/w"));
    CHECK_FALSE(many.search("net/conv/w"));
    // Beyond what PCRE2 compiles: a clear error, not a crash.
    const std::string huge(120000, '(');
    CHECK_THROWS_WITH(pattern(huge, "collection 'c'"), Catch::Contains("collection 'c'") && Catch::Contains("offset"));
    try {
        (void)pattern(huge, "collection 'c'");
    } catch (const config_error& e) {
        CHECK(std::string(e.what()).size() < 1000); // the pattern is shortened in the message
        CHECK_THAT(e.what(), Catch::Contains("(120000 bytes)"));
    }
}

TEST_CASE("copies share the compiled pattern") {
    const pattern a("fc\\d", "test");
    const pattern b = a; // NOLINT(performance-unnecessary-copy-initialization): the copy is the subject
    CHECK(b.search("fc1"));
    CHECK(b.text() == a.text());
}
