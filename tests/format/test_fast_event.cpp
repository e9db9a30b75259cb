// The trial's fast record decoder agrees with the format layer's full decoder
// on every record it accepts, and declines what it does not handle.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "trial/run_writer.hpp"
#include "support.hpp"
#include "trial/golden.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/format/detail/fast_event.hpp"
#include "tdbg/trial/trial.hpp"

TEST_CASE("tensor decoder: every fixture record decodes as the full decoder decodes it") {
    std::size_t records = 0;
    for (const std::string run : tdbg::test::fixture_runs) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(tdbg::test::fixture_run(run) / "events")) {
            if (!entry.is_regular_file()) {
                continue;
            }
            const auto data = std::make_shared<const std::string>(tdbg::test::read_file(entry.path()));
            tdbg::format::record_reader reader(*data, entry.path().string());
            while (auto record = reader.next()) {
                INFO(entry.path() << " at " << record->offset);
                const auto fast = tdbg::format::detail::decode_tensor_fast(record->payload, data);
                REQUIRE(fast.has_value());
                const auto full = tdbg::format::decode_tensor_event(record->payload, data, entry.path().string(),
                                                                    record->payload_offset());
                CHECK(fast->tag == full.tag);
                CHECK(fast->value.type() == full.value.type());
                CHECK(fast->value.shape() == full.value.shape());
                CHECK(fast->value.bytes() == full.value.bytes());
                ++records;
            }
        }
    }
    CHECK(records > 1000);
}

TEST_CASE("tensor decoder: strings, truncated and foreign payloads are declined") {
    tdbg::format::tensor_event ev;
    ev.step = 3;
    ev.tag = "s";
    ev.value = tdbg::tensor_value(std::vector<std::string>{"a", "bc"});
    ev.mode = tdbg::mode::train;
    ev.mode_step = 3;
    const std::string strings = tdbg::format::encode_tensor_event(ev);
    CHECK_FALSE(tdbg::format::detail::decode_tensor_fast(strings, nullptr).has_value());

    ev.value = tdbg::test::iota_value(1, 3);
    const std::string good = tdbg::format::encode_tensor_event(ev);
    const auto ok = tdbg::format::detail::decode_tensor_fast(good, nullptr);
    REQUIRE(ok.has_value());
    CHECK(ok->tag == "s");
    CHECK(ok->value.data_as<float>()[2] == 3.0F);
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
        INFO("cut at " << cut);
        CHECK_FALSE(tdbg::format::detail::decode_tensor_fast(good.substr(0, cut), nullptr).has_value());
    }
    CHECK_FALSE(tdbg::format::detail::decode_tensor_fast(tdbg::format::encode_scalar_event(1.0, 2, "x", 1.5F), nullptr).has_value());
    CHECK_FALSE(tdbg::format::detail::decode_tensor_fast(tdbg::format::encode_file_version_event(1.0), nullptr).has_value());
    CHECK_FALSE(tdbg::format::detail::decode_tensor_fast(std::string("\xff\xff\xff", 3), nullptr).has_value());
}

TEST_CASE("tensor decoder: a run with string tensors is read through the full decoder") {
    tdbg::test::temp_dir dir("string_values");
    tdbg::test::run_writer w(dir.path());
    w.collections("worker_0", 1);
    w.step(0, "worker_0", tdbg::mode::train, 0,
           {tdbg::test::saved_tensor{"names", tdbg::tensor_value(std::vector<std::string>{"x", "yz"}), {}, {}},
            tdbg::test::saved_tensor{"b", tdbg::tensor_value(std::vector<bool>{true, false, true}), {}, {}}});
    w.end();
    const auto t = tdbg::create_trial(dir.path().string());
    CHECK(t.tensor("names").value(0).strings() == std::vector<std::string>{"x", "yz"});
    CHECK(t.tensor("b").value(0).type() == tdbg::dtype::boolean);
    CHECK(tdbg::test::element(t.tensor("b").value(0), 2) == 1.0);
    CHECK_THROWS_AS(t.tensor("names").reduction_value(0, "max"), tdbg::dtype_mismatch);
}

TEST_CASE("tensor decoder: damaged payloads are declined or decoded as the full decoder decodes them") {
    tdbg::format::tensor_event ev;
    ev.step = 70000;
    ev.wall_time = 1.5;
    ev.tag = "w/x";
    ev.value = tdbg::tensor_value(std::vector<double>{1.0, -2.0, 3.5, 4.0}, {2, 2});
    ev.mode = tdbg::mode::eval;
    ev.mode_step = 7;
    const std::string good = tdbg::format::encode_tensor_event(ev);
    std::size_t accepted = 0;
    for (std::size_t i = 0; i < good.size(); ++i) {
        for (const unsigned char c : {0x00U, 0x01U, 0x08U, 0x0aU, 0x12U, 0x22U, 0x7fU, 0x80U, 0xffU}) {
            std::string damaged = good;
            damaged[i] = static_cast<char>(c);
            const auto fast = tdbg::format::detail::decode_tensor_fast(damaged, nullptr);
            if (!fast) {
                continue;
            }
            ++accepted;
            INFO("byte " << i << " set to " << static_cast<int>(c));
            tdbg::format::tensor_event full;
            REQUIRE_NOTHROW(full = tdbg::format::decode_tensor_event(damaged, nullptr, "damaged", 0));
            CHECK(fast->tag == full.tag);
            CHECK(fast->value.type() == full.value.type());
            CHECK(fast->value.shape() == full.value.shape());
            CHECK(fast->value.bytes() == full.value.bytes());
        }
    }
    CHECK(accepted > 0);
}

TEST_CASE("tensor head: dtype, shape and where the elements lie, from a record's first bytes") {
    tdbg::format::tensor_event ev;
    ev.step = 7;
    ev.tag = "layer/weight";
    ev.value = tdbg::test::iota_value(0.5F, 3000);
    ev.mode = tdbg::mode::eval;
    ev.mode_step = 2;
    const std::string payload = tdbg::format::encode_tensor_event(ev);
    const auto whole = tdbg::format::detail::decode_tensor_head(payload, payload.size());
    REQUIRE(whole.has_value());
    CHECK(whole->tag == "layer/weight");
    CHECK(whole->type == tdbg::dtype::float32);
    CHECK(whole->shape == tdbg::tensor_value::shape_type{3000});
    CHECK(whole->content_size == 12000);
    CHECK(payload.substr(whole->content_offset, whole->content_size) == ev.value.bytes());
    // Any prefix that reaches the elements' length gives the same head; a shorter one none.
    for (std::size_t cut = 0; cut <= payload.size(); cut += cut < whole->content_offset + 8 ? 1 : 997) {
        INFO("cut at " << cut);
        const auto head = tdbg::format::detail::decode_tensor_head(std::string_view(payload).substr(0, cut),
                                                                   payload.size());
        REQUIRE(head.has_value() == (cut >= whole->content_offset));
        if (head) {
            CHECK(head->shape == whole->shape);
            CHECK(head->content_offset == whole->content_offset);
        }
    }
    // A payload of another size than its fields declare, a string tensor and other events: none.
    CHECK_FALSE(tdbg::format::detail::decode_tensor_head(payload, payload.size() + 1).has_value());
    CHECK_FALSE(tdbg::format::detail::decode_tensor_head(payload, payload.size() - 1).has_value());
    ev.value = tdbg::tensor_value(std::vector<std::string>{"a", "bc"});
    const std::string strings = tdbg::format::encode_tensor_event(ev);
    CHECK_FALSE(tdbg::format::detail::decode_tensor_head(strings, strings.size()).has_value());
    const std::string scalar = tdbg::format::encode_scalar_event(1.0, 2, "x", 1.5F);
    CHECK_FALSE(tdbg::format::detail::decode_tensor_head(scalar, scalar.size()).has_value());
}
