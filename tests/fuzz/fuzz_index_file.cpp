// libFuzzer target: an index file's text through the format layer's parser
// and the trial's fast parser. Bad input must end in tdbg::format_error, and
// whatever the fast parser accepts, the full parser must read the same.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tdbg/format/index_file.hpp"
#include "tdbg/trial/detail/index_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    tdbg::detail::index_view fast;
    const bool fast_ok = tdbg::detail::parse_index_fast(text, fast);
    try {
        const tdbg::format::index_file full = tdbg::format::parse_index_file(text, "index/000000000/000000000001_worker_0.json");
        if (fast_ok) {
            const tdbg::detail::index_view expected = tdbg::detail::view_of(full);
            bool same = fast.index_mode == expected.index_mode && fast.mode_step == expected.mode_step &&
                        fast.event_file_name == expected.event_file_name && fast.tensors.size() == expected.tensors.size() &&
                        fast.shapes.size() == expected.shapes.size();
            for (std::size_t i = 0; same && i < fast.tensors.size(); ++i) {
                same = fast.tensors[i].name == expected.tensors[i].name && fast.tensors[i].start == expected.tensors[i].start &&
                       fast.tensors[i].length == expected.tensors[i].length;
            }
            if (!same) {
                std::abort(); // the fast parser misread the file
            }
        }
    } catch (const tdbg::format_error&) {
        if (fast_ok) {
            std::abort(); // the fast parser accepted what the format layer refuses
        }
    }
    return 0;
}
