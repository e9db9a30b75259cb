// libFuzzer target: regular expressions as users and runs write them (collection
// regexes, tensor_regex), compiled and matched by tdbg's one pattern class
// (PCRE2). The input is "<pattern>\n<subject>". A pattern that does not compile,
// or a match past PCRE2's limits, must end in tdbg::config_error; nothing may
// crash, recurse without bound or run past the fuzzer's timeout.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tdbg/core/detail/pattern.hpp"
#include "tdbg/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t split = input.find('\n');
    const std::string_view text = input.substr(0, split);
    const std::string_view subject = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
    try {
        const tdbg::detail::pattern p{std::string(text), "fuzz input"};
        (void)p.search(subject);
        (void)p.search(text); // a pattern matched against its own text
    } catch (const tdbg::config_error&) {
        return 0;
    }
    return 0;
}
