#include <catch2/catch.hpp>

#include <numeric>

#include "tdbg/format/event.hpp"
#include "tdbg/hook/detail/buffer_pool.hpp"
#include "tdbg/format/detail/event_pieces.hpp"

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
