#pragma once
// A local storage that counts what a trial asks of it. It forwards local_storage's
// capabilities (positional reads of an opened file), so that a trial over it runs
// the very code path of a trial over a local run (and it proves that any type with
// the storage concept's members can back a trial).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::test {

/// What a counting_storage was asked.
struct counters {
    std::atomic<int> index_reads{0};
    std::atomic<int> lists{0};
    std::atomic<int> range_reads{0};
    std::atomic<std::uint64_t> range_bytes{0}; // bytes the range reads asked for
    /// Listings leave out keys containing `hidden` while `hide_listings` > 0 (one per
    /// listing), as a directory listing racing a rename can. Set before the trial opens.
    std::string hidden;
    std::atomic<int> hide_listings{0};
};

/// A local storage that counts index reads, range reads and listings.
class counting_storage {
public:
    /// A file opened for positional reads; each read counts as a range read, or as an
    /// index read for an index file (which a trial reads whole this way).
    class reader {
    public:
        reader(tdbg::local_storage::reader inner, std::shared_ptr<counters> c, bool index)
            : inner_(std::move(inner)), counters_(std::move(c)), index_(index) {}
        [[nodiscard]] std::uint64_t size() const noexcept { return inner_.size(); }
        void read_at(std::uint64_t offset, char* out, std::size_t length) const {
            ++(index_ ? counters_->index_reads : counters_->range_reads);
            if (!index_) {
                counters_->range_bytes += length;
            }
            inner_.read_at(offset, out, length);
        }

    private:
        tdbg::local_storage::reader inner_;
        std::shared_ptr<counters> counters_;
        bool index_;
    };

    counting_storage(std::filesystem::path root, std::shared_ptr<counters> c) : inner_(std::move(root)), counters_(std::move(c)) {}

    void put(const std::string& key, std::string_view bytes) const { inner_.put(key, bytes); }
    [[nodiscard]] tdbg::local_storage::writer open_write(const std::string& key) const { return inner_.open_write(key); }
    [[nodiscard]] std::string read(const std::string& key) const {
        if (key.rfind("index/", 0) == 0) {
            ++counters_->index_reads;
        }
        return inner_.read(key);
    }
    [[nodiscard]] std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const {
        ++counters_->range_reads;
        counters_->range_bytes += length;
        return inner_.read_range(key, offset, length);
    }
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after) const {
        ++counters_->lists;
        auto keys = inner_.list(prefix, start_after);
        if (!counters_->hidden.empty() && prefix.rfind("index", 0) == 0 && counters_->hide_listings.load() > 0) {
            --counters_->hide_listings;
            keys.erase(std::remove_if(keys.begin(), keys.end(),
                                      [&](const std::string& k) { return k.find(counters_->hidden) != std::string::npos; }),
                       keys.end());
        }
        return keys;
    }
    [[nodiscard]] reader open_read(const std::string& key) const {
        return reader(inner_.open_read(key), counters_, key.rfind("index/", 0) == 0);
    }
    [[nodiscard]] bool exists(const std::string& key) const { return inner_.exists(key); }
    [[nodiscard]] std::string describe() const { return "counting:" + inner_.describe(); }

private:
    tdbg::local_storage inner_;
    std::shared_ptr<counters> counters_;
};
static_assert(tdbg::is_storage_v<counting_storage>, "the test storage must be a storage");

} // namespace tdbg::test
