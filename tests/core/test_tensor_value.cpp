#include <catch2/catch.hpp>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xtensor.hpp>

#include "tdbg/core/tensor_value.hpp"
#include "tdbg/core/xtensor.hpp"

using namespace tdbg;

TEST_CASE("tensor_value owns a moved-in vector") {
    tensor_value v(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
    CHECK(v.type() == dtype::float32);
    CHECK(v.shape() == tensor_value::shape_type{2, 3});
    CHECK(v.size() == 6);
    CHECK(v.nbytes() == 24);
    CHECK(v.owns_data());
    auto view = v.as<float>();
    CHECK(view(1, 2) == 6.0F);
    CHECK(view(0, 1) == 2.0F);
}

TEST_CASE("tensor_value views borrowed memory without a copy") {
    std::vector<double> data{1.5, 2.5, 3.5};
    auto v = tensor_value::borrow(data.data(), {3});
    CHECK_FALSE(v.owns_data());
    CHECK(v.data_as<double>() == data.data());
    data[1] = 9.0;
    CHECK(v.as<double>()(1) == 9.0);
    auto owned = v.copy();
    data[1] = 0.0;
    CHECK(owned.owns_data());
    CHECK(owned.as<double>()(1) == 9.0);
}

TEST_CASE("tensor_value from an xtensor expression evaluates it") {
    xt::xarray<int> a{{1, 2}, {3, 4}};
    const tensor_value v = tdbg::to_tensor_value(a * 2 + 1);
    CHECK(v.type() == dtype::int32);
    CHECK(v.shape() == tensor_value::shape_type{2, 2});
    const bool same = v.to_xarray<int>() == xt::xarray<int>{{3, 5}, {7, 9}};
    CHECK(same);
}

TEST_CASE("typed access with the wrong type names both types") {
    tensor_value v(std::vector<std::int64_t>{1, 2});
    CHECK_THROWS_AS(v.as<float>(), dtype_mismatch);
    CHECK_THROWS_WITH(v.to_xarray<double>(), Catch::Contains("expected float64") && Catch::Contains("found int64"));
}

TEST_CASE("0-d, empty, bool and string tensors") {
    auto s = tensor_value::scalar(7.25F);
    CHECK(s.shape().empty());
    CHECK(s.size() == 1);
    CHECK(s.as<float>()() == 7.25F);

    tensor_value e(std::vector<float>{}, {0, 3});
    CHECK(e.size() == 0);
    CHECK(e.nbytes() == 0);

    tensor_value b(std::vector<bool>{true, false, true});
    CHECK(b.type() == dtype::boolean);
    CHECK(b.bytes() == std::string("\x01\x00\x01", 3));

    tensor_value str(std::vector<std::string>{"a", "bc"});
    CHECK(str.type() == dtype::string);
    CHECK(str.strings().at(1) == "bc");
}

TEST_CASE("string tensors: elements read in place, in order or at any index, and strings() as before") {
    // Across several marks (one every 64 elements), with lengths of one and two varint bytes.
    std::vector<std::string> elements;
    for (std::size_t i = 0; i < 200; ++i) {
        elements.push_back(i % 7 == 0 ? std::string() : std::string(i, static_cast<char>('a' + i % 26)));
    }
    elements[5] = std::string("nul\0in", 6);
    const tensor_value v(elements, {10, 20});
    const string_view_list views = v.string_views();
    REQUIRE(views.size() == 200);
    std::size_t i = 0;
    for (const std::string_view s : views) {
        CHECK(s == elements[i]);
        CHECK(views[i] == elements[i]);
        ++i;
    }
    CHECK(i == 200);
    CHECK(views[199] == std::string(199, static_cast<char>('a' + 199 % 26)));
    CHECK(v.strings() == elements);                 // made once, on demand
    CHECK(&v.strings() == &v.copy().strings());    // and shared by copies
    CHECK(v.reshaped({200}).string_views()[64] == elements[64]);
    CHECK_THROWS_AS(tensor_value::scalar(1.0F).string_views(), dtype_mismatch);
    const tensor_value none(std::vector<std::string>{}, {0});
    CHECK(none.string_views().empty());
    CHECK(none.string_views().begin() == none.string_views().end());
}

TEST_CASE("string tensors: view_string_fields views string_val fields where they lie, and checks them") {
    auto buffer = std::make_shared<std::string>(std::string("\x42\x02" "ab" "\x42\x00" "\x42\x03" "xyz", 11));
    const tensor_value v = tensor_value::view_string_fields({3}, *buffer, buffer);
    CHECK(v.type() == dtype::string);
    CHECK(v.string_views()[0].data() == buffer->data() + 2); // no copy
    CHECK(v.strings() == std::vector<std::string>{"ab", "", "xyz"});
    std::weak_ptr<std::string> watch = buffer;
    buffer.reset();
    CHECK_FALSE(watch.expired()); // the value keeps the bytes alive
    CHECK(v.string_views()[2] == "xyz");

    const std::string fields("\x42\x02" "ab" "\x42\x00", 6);
    CHECK_THROWS_WITH(tensor_value::view_string_fields({3}, fields, nullptr),
                      Catch::Contains("element 2 at byte 6 of its fields: the fields end after 2 of 3 elements"));
    CHECK_THROWS_WITH(tensor_value::view_string_fields({1}, fields, nullptr),
                      Catch::Contains("2 bytes of its fields follow its 1 elements"));
    CHECK_THROWS_WITH(tensor_value::view_string_fields({1}, std::string("\x42\x05" "ab", 4), nullptr),
                      Catch::Contains("its length 5 runs past the 2 bytes that remain"));
    CHECK_THROWS_WITH(tensor_value::view_string_fields({1}, std::string("\x0a\x00", 2), nullptr),
                      Catch::Contains("not a string_val field"));
}

TEST_CASE("raw bytes: copied, or viewed when aligned, sizes are checked") {
    const std::string bytes("\x00\x00\x80\x3f\x00\x00\x00\x40", 8); // 1.0f, 2.0f
    auto v = tensor_value::from_bytes(dtype::float32, {2}, bytes);
    CHECK(v.as<float>()(1) == 2.0F);
    CHECK_THROWS_WITH(tensor_value::from_bytes(dtype::float32, {3}, bytes), Catch::Contains("12 bytes expected"));

    auto buffer = std::make_shared<std::string>(std::string(3, 'x') + bytes + bytes);
    auto aligned_offset = static_cast<std::size_t>((4 - reinterpret_cast<std::uintptr_t>(buffer->data()) % 4) % 4);
    std::string_view inside(buffer->data() + aligned_offset, 8);
    auto view = tensor_value::view_bytes(dtype::uint8, {8}, inside, buffer);
    CHECK(view.bytes().data() == inside.data());
    auto misaligned = tensor_value::view_bytes(dtype::float32, {2}, std::string_view(buffer->data() + 3, 8), buffer);
    CHECK(misaligned.as<float>()(0) == 1.0F);

    auto flags = tensor_value::from_bytes(dtype::boolean, {2}, std::string("\x00\x05", 2));
    CHECK(flags.bytes() == std::string("\x00\x01", 2));
}

TEST_CASE("tensor_value::reshaped shares the elements under another shape of as many") {
    const tensor_value v(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
    const tensor_value flat = v.reshaped({6});
    CHECK(flat.shape() == tensor_value::shape_type{6});
    CHECK(flat.data_as<float>() == v.data_as<float>()); // shared, not copied
    CHECK(flat.as<float>()(4) == 5.0F);
    CHECK(flat.owns_data());
    const tensor_value scalar = tensor_value::scalar(2.5);
    CHECK(scalar.reshaped({1}).shape() == tensor_value::shape_type{1});
    CHECK(scalar.reshaped({1}).data_as<double>()[0] == 2.5);
    CHECK_THROWS_AS(v.reshaped({4}), tdbg::error);
    std::vector<int> borrowed{1, 2};
    CHECK_FALSE(tensor_value::borrow(borrowed.data(), {2}).reshaped({2, 1}).owns_data());
}
