#include <catch2/catch.hpp>

#include <numeric>

#include "tdbg/format/event.hpp"
#include "tdbg/hook/detail/writer/buffer_pool.hpp"
#include "tdbg/format/detail/event_pieces.hpp"
#include "tdbg/format/index_file.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/detail/writer/record_block.hpp"

using namespace tdbg;

namespace {
std::string joined(const format::detail::event_pieces& pieces) {
    std::string out;
    pieces.for_each([&](std::string_view p) { out.append(p.data(), p.size()); });
    return out;
}

format::tensor_event event_of(tensor_value value, std::string tag) {
    format::tensor_event ev;
    ev.step = 7;
    ev.wall_time = 1700000000.25;
    ev.tag = std::move(tag);
    ev.value = std::move(value);
    ev.mode = mode::eval;
    ev.mode_step = 3;
    return ev;
}
} // namespace

TEST_CASE("event pieces hold the bytes of format::encode_tensor_event") {
    std::vector<float> big(70000);
    std::iota(big.begin(), big.end(), -5.0F);
    std::vector<format::tensor_event> events{
        event_of(tensor_value::scalar(1.5F), "loss"),
        event_of(tensor_value(big, {700, 100}), "MLP_fc1.weight"),
        event_of(tensor_value(std::vector<std::string>{"a", std::string(5000, 'b')}), "text"),
        event_of(tensor_value(std::vector<double>(1000, 0.5)), std::string(5000, 't')), // long tag, dims named after it
        event_of(tensor_value(std::vector<bool>{true, false, true}), "mask"),
    };
    format::tensor_event bare = event_of(tensor_value(std::vector<std::int64_t>{1, 2}), "x");
    bare.step = 0;
    bare.mode.reset();
    bare.mode_step.reset();
    events.push_back(bare);
    for (const auto& ev : events) {
        INFO(ev.tag.substr(0, 20));
        const auto pieces = format::detail::encode_tensor_event_pieces(ev);
        const std::string want = format::encode_tensor_event(ev);
        CHECK(pieces.size() == want.size());
        CHECK(joined(pieces) == want);
    }
    // The large tensor's content is referenced in place, not copied.
    const auto pieces = format::detail::encode_tensor_event_pieces(events[1]);
    bool referenced = false;
    pieces.for_each([&](std::string_view p) { referenced = referenced || p.data() == events[1].value.bytes().data(); });
    CHECK(referenced);
}

TEST_CASE("buffer pool copies exactly and reuses the buffers released") {
    auto pool = std::make_shared<detail::buffer_pool>(std::size_t{8} << 20U);
    std::vector<float> data(100000);
    std::iota(data.begin(), data.end(), 0.0F);
    const auto borrowed = tensor_value::borrow(data.data(), {100, 1000});
    const void* first_address = nullptr;
    {
        const tensor_value copy = pool->copy(borrowed);
        CHECK(copy.owns_data());
        CHECK(copy.shape() == tensor_value::shape_type{100, 1000});
        CHECK(copy.bytes() == borrowed.bytes());
        CHECK(copy.bytes().data() != borrowed.bytes().data());
        first_address = copy.bytes().data();
        CHECK(pool->free_bytes() == 0);
    }
    CHECK(pool->free_bytes() >= data.size() * sizeof(float));
    const tensor_value again = pool->copy(borrowed);
    CHECK(static_cast<const void*>(again.bytes().data()) == first_address);
    CHECK(pool->free_bytes() == 0);
    // Small tensors are plain copies; a buffer outliving its pool is freed normally.
    const auto small = pool->copy(tensor_value(std::vector<float>{1.0F, 2.0F}));
    CHECK(small.data_as<float>()[1] == 2.0F);
    auto orphan = pool->copy(borrowed);
    pool.reset();
    CHECK(orphan.data_as<float>()[99999] == 99999.0F);
}

TEST_CASE("a record block holds the records the writer's own encoder and framer write, and where each lies") {
    // Written in place, each nested message's length is widened after its body: a 20000-byte tag
    // makes the Summary.Value, the Summary and the Event need three-byte lengths.
    std::vector<format::tensor_event> events{
        event_of(tensor_value::scalar(1.5F).reshaped({1}), "smdebug/reductions/max/gradient/fc.weight"),
        event_of(tensor_value(std::vector<std::int64_t>{-1, 2, 3}), "ints"),
        event_of(tensor_value(std::vector<double>(200, 0.25)), std::string(20000, 'n')),
        event_of(tensor_value(std::vector<std::string>{"a", "bc"}), "text"),
        event_of(tensor_value(std::vector<float>(60, 2.0F)), "a 240-byte value: the tensor message needs two bytes"),
    };
    detail::record_block block;
    CHECK(block.empty());
    std::string expected;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> places;
    for (const format::tensor_event& ev : events) {
        CHECK_FALSE(block.other_step(ev));
        const std::size_t start = expected.size();
        format::append_record(expected, format::encode_tensor_event(ev), format::footer_kind::smdebug_constant);
        places.emplace_back(start, expected.size() - start);
        block.add(ev);
    }
    CHECK(block.bytes() == expected.size());
    format::tensor_event other_step = events[0];
    other_step.step = 8;
    CHECK(block.other_step(other_step));
    format::tensor_event other_mode = events[0];
    other_mode.mode = mode::train;
    CHECK(block.other_step(other_mode));

    detail::write_items::records taken = block.take();
    CHECK(block.empty());
    CHECK(taken.bytes == expected);
    CHECK(taken.step == 7);
    CHECK(taken.mode == mode::eval);
    CHECK(taken.mode_step == 3);
    REQUIRE(taken.entries.size() == events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& e = taken.entries[i];
        CHECK(taken.names.substr(e.name_at, e.name_size) == events[i].tag);
        CHECK(e.start == places[i].first);
        CHECK(e.length == places[i].second);
        // Each entry locates one whole record whose payload decodes to the event saved.
        const std::string_view record = std::string_view(taken.bytes).substr(e.start, e.length);
        const format::tensor_event back =
            format::decode_tensor_event(format::record_payload(record, "block", e.start), nullptr, "block", e.start);
        CHECK(back.tag == events[i].tag);
        CHECK(back.value.shape() == events[i].value.shape());
        CHECK(back.value.bytes() == events[i].value.bytes());
    }
    // The next block starts afresh, its memory sized after the last one; a record of another
    // mode step is another block's (here a long decimal in the plugin data).
    format::tensor_event far = events[1];
    far.step = 123456789012;
    far.mode_step = 123456789012;
    block.add(far);
    const detail::write_items::records next = block.take();
    CHECK(next.entries.size() == 1);
    CHECK(next.entries[0].start == 0);
    CHECK(next.mode_step == 123456789012);
    std::string far_record;
    format::append_record(far_record, format::encode_tensor_event(far), format::footer_kind::smdebug_constant);
    CHECK(next.bytes == far_record);
}

TEST_CASE("index_writer writes, entry by entry, the JSON that to_json writes of the whole index") {
    format::index_file index;
    index.mode = mode::predict;
    index.mode_step = 42;
    index.event_file_name = "events/000000000007/000000000007_worker_0.tfevents";
    index.tensor_payload = {{"a", 0, 100}, {"quote\"d\\ and \u00e9", 100, 12345678901234}, {"c/d:0", 7, 9}};
    index.shape_payload = {{"a", "a", {2, 3}}, {"s", "orig", {}}};
    format::index_writer w;
    w.set_meta(index.mode, index.mode_step);
    w.set_event_file_name(index.event_file_name);
    CHECK(w.empty());
    for (const auto& t : index.tensor_payload) {
        w.add_tensor(t.tensorname, t.start_idx, t.length);
    }
    for (const auto& sh : index.shape_payload) {
        w.add_shape(sh);
    }
    CHECK_FALSE(w.empty());
    const std::string text = w.text();
    CHECK(text == format::to_json(index));
    CHECK(format::parse_index_file(text, "index.json") == index);
    CHECK(text.find(R"("length": 12345678901234})") != std::string::npos);
    // Shapes only: no event file named, as smdebug writes it.
    format::index_writer shapes_only;
    shapes_only.add_shape(index.shape_payload[0]);
    CHECK(shapes_only.text() ==
          R"({"meta": {"mode": "GLOBAL", "mode_step": 0}, "tensor_payload": [], "shape_payload": [{"tensorname": "a", "originalname": "a", "shape": [2, 3]}]})");
}
