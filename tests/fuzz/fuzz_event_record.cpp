// libFuzzer target: an event file's bytes through the TFRecord reader, and
// each record's payload through the full event decoder and the trial's fast
// tensor decoder. Bad input must end in tdbg::format_error (nothing else
// escapes), and the two decoders must agree on every record both accept.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tdbg/format/event.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/format/detail/fast_event.hpp"

namespace {

void check_payload(std::string_view payload, std::uint64_t offset) {
    // The fast path reads only what it fully understands; whatever it accepts, the full decoder must read the same.
    const auto owner = std::make_shared<std::string>(payload);
    std::optional<tdbg::format::detail::fast_tensor> fast;
    fast = tdbg::format::detail::decode_tensor_fast(*owner, owner);
    try {
        const tdbg::format::tensor_event ev = tdbg::format::decode_tensor_event(payload, nullptr, "fuzz.tfevents", offset);
        if (fast && (fast->tag != ev.tag || fast->value.type() != ev.value.type() ||
                     fast->value.shape() != ev.value.shape() || fast->value.bytes() != ev.value.bytes())) {
            std::abort(); // the decoders disagree
        }
    } catch (const tdbg::format_error&) {
        if (fast) {
            std::abort(); // the fast path accepted what the format layer refuses
        }
    }
    try {
        (void)tdbg::format::decode_event(payload, "fuzz.tfevents", offset);
    } catch (const tdbg::format_error&) {
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // The payload alone, as an index entry would locate it.
    check_payload(bytes, 0);
    // The whole file, record by record.
    try {
        tdbg::format::record_reader reader(bytes, "fuzz.tfevents");
        while (auto r = reader.next()) {
            check_payload(r->payload, r->offset + tdbg::format::record_header_size);
        }
    } catch (const tdbg::format_error&) {
    }
    // One record as an index entry locates it.
    try {
        (void)tdbg::format::record_payload(bytes, "fuzz.tfevents", 0);
    } catch (const tdbg::format_error&) {
    }
    return 0;
}
