// libFuzzer target: an index file's text through the one index parser
// (format/detail/index_parser.hpp, behind format::parse_index_file and the
// trial alike). Bad input must end in tdbg::format_error, never a crash, a
// hang or another exception; what the parser accepts must survive a round
// trip through smdebug's byte layout (to_json) unchanged.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tdbg/core/error.hpp"
#include "tdbg/format/index_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string_view file = "index/000000000/000000000001_worker_0.json";
    tdbg::format::index_file parsed;
    try {
        parsed = tdbg::format::parse_index_file(text, file);
    } catch (const tdbg::format_error&) {
        return 0; // refused with the format's error: what bad input must get
    }
    std::string written;
    try {
        written = tdbg::format::to_json(parsed);
    } catch (const tdbg::error&) {
        return 0; // accepted values the writer refuses to write (e.g. a name that is not UTF-8)
    }
    try {
        if (tdbg::format::parse_index_file(written, file) != parsed) {
            std::abort(); // written and read back, the index changed
        }
    } catch (const tdbg::format_error&) {
        std::abort(); // the parser refuses what the writer wrote
    }
    return 0;
}
