#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <xtensor/xarray.hpp>

#include "support.hpp"
#include "tdbg/format/crc32c.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/hook.hpp"

using namespace tdbg;
using tdbg::test::temp_dir;

namespace {

struct tb_contents {
    std::vector<std::string> files;
    std::map<std::string, std::vector<std::pair<std::int64_t, float>>> scalars;
    std::map<std::string, std::vector<format::histogram>> histograms;
};

// Reads every TensorBoard file of `dir`, checking its name, its first event and every true CRC.
tb_contents read_tensorboard(const std::filesystem::path& dir) {
    tb_contents out;
    const std::regex name(R"(events\.out\.tfevents\.\d{10}\..+\.\d+\.worker_0\.\d{12})");
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file()) {
            continue;
        }
        const std::string file = e.path().filename().string();
        INFO(e.path());
        CHECK(std::regex_match(file, name));
        out.files.push_back(e.path().parent_path().filename().string() + "/" + file);
        const std::string data = tdbg::test::read_file(e.path());
        std::size_t offset = 0;
        bool first = true;
        while (offset < data.size()) {
            REQUIRE(offset + 16 <= data.size());
            std::uint64_t length = 0;
            for (int i = 7; i >= 0; --i) {
                length = (length << 8U) | static_cast<unsigned char>(data[offset + static_cast<std::size_t>(i)]);
            }
            const std::string_view payload(data.data() + offset + 12, length);
            std::uint32_t footer = 0;
            for (int i = 3; i >= 0; --i) {
                footer = (footer << 8U) | static_cast<unsigned char>(data[offset + 12 + length + static_cast<std::size_t>(i)]);
            }
            CHECK(footer == format::masked_crc32c(payload)); // true CRCs, as TensorBoard wants
            const auto ev = format::decode_event(payload, file, offset + 12);
            if (first) {
                REQUIRE(ev.file_version);
                CHECK(*ev.file_version == "brain.Event:2");
                first = false;
            }
            for (const auto& v : ev.values) {
                if (v.simple_value) {
                    out.scalars[v.tag].emplace_back(ev.step, *v.simple_value);
                }
                if (v.histo) {
                    out.histograms[v.tag].push_back(*v.histo);
                }
            }
            offset += 16 + length;
        }
    }
    return out;
}

} // namespace

TEST_CASE("tensorboard: scalars for losses and save_scalar, histograms for other collections") {
    temp_dir dir("hook_tensorboard");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    o.include_collections = {"weights"};
    o.export_tensorboard = true;
    const xt::xarray<float> w{{-1.5F, 0.0F}, {0.25F, 2.0F}};
    {
        hook h(o);
        h.set_mode(mode::train);
        for (int i = 0; i < 2; ++i) {
            h.begin_step();
            h.save_tensor("fc.weight", w);
            h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(1.0F / static_cast<float>(i + 1)));
            h.save_scalar("lr", 0.5);
        }
        h.set_mode(mode::eval);
        h.begin_step();
        h.save_tensor("CrossEntropyLoss_output_0", tensor_value::scalar(0.75F));
        h.close();
    }
    const auto tb = read_tensorboard(dir.path() / "run" / "tensorboard");
    // One file per mode and step, in a directory per mode, as smdebug lays them out.
    std::size_t train = 0;
    std::size_t eval = 0;
    for (const auto& f : tb.files) {
        train += f.rfind("TRAIN/", 0) == 0 ? 1 : 0;
        eval += f.rfind("EVAL/", 0) == 0 ? 1 : 0;
    }
    CHECK(train == 2);
    CHECK(eval == 1);
    const auto loss = tb.scalars.at("CrossEntropyLoss_output_0");
    REQUIRE(loss.size() == 3);
    std::map<std::int64_t, float> by_step(loss.begin(), loss.end());
    CHECK(by_step.at(0) == 1.0F);
    CHECK(by_step.at(1) == 0.5F);
    CHECK(by_step.at(2) == 0.75F);
    CHECK(tb.scalars.at("scalar/lr").size() == 2);
    const auto& hist = tb.histograms.at("weights/fc.weight");
    REQUIRE(hist.size() == 2);
    const auto& h0 = hist.front();
    CHECK(h0.num == 4);
    CHECK(h0.min == -1.5);
    CHECK(h0.max == 2.0);
    CHECK(h0.sum == Approx(0.75));
    CHECK(h0.sum_squares == Approx(1.5 * 1.5 + 0.0625 + 4.0));
    double counted = 0;
    for (double c : h0.bucket) {
        counted += c;
    }
    CHECK(counted == 4);
    REQUIRE(h0.bucket_limit.size() == h0.bucket.size());
    CHECK(h0.bucket.front() == 0); // the empty bucket left of the support
    CHECK(h0.bucket_limit.back() >= 2.0);
    CHECK(h0.bucket_limit.front() <= -1.5);
    // The losses collection gets no histogram (smdebug's NON_HISTOGRAM_COLLECTIONS).
    CHECK(tb.histograms.count("losses/CrossEntropyLoss_output_0") == 0);
}

TEST_CASE("tensorboard: an absolute tensorboard_dir is a local directory of its own") {
    temp_dir dir("hook_tensorboard_abs");
    hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.tensorboard_dir = (dir.path() / "tb").string();
    o.save_config = save_config(save_config_mode{1, {}, 0, std::nullopt});
    {
        hook h(o);
        h.begin_step();
        h.save_scalar("accuracy", 0.25);
        h.close();
    }
    CHECK_FALSE(std::filesystem::exists(dir.path() / "run" / "tensorboard"));
    const auto tb = read_tensorboard(dir.path() / "tb");
    REQUIRE(tb.files.size() == 1);
    CHECK(tb.files.front().rfind("GLOBAL/", 0) == 0);
    CHECK(tb.scalars.at("scalar/accuracy").front().second == 0.25F);
}
