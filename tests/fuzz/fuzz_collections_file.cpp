// libFuzzer target: a collections file's text through the format layer's
// parser. Bad input must end in tdbg::format_error; what parses is written
// back and read again without any other exception.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tdbg/format/collections_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const char* const name = "collections/000000000/worker_0_collections.json";
    tdbg::format::collections_file parsed;
    try {
        parsed = tdbg::format::parse_collections_file(text, name);
    } catch (const tdbg::format_error&) {
        return 0;
    }
    std::string written;
    try {
        written = tdbg::format::to_json(parsed);
    } catch (const tdbg::error&) {
        return 0; // what JSON holds but smdebug's files cannot (such as two collections of one name)
    }
    (void)tdbg::format::parse_collections_file(written, name);
    return 0;
}
