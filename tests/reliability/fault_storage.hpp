#pragma once
// A storage for fault tests: local files underneath, a byte budget that runs
// out like a full disk (every write past it fails, as ENOSPC does, until
// space is freed), and a log of what was published, in order.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/local_storage.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::test {

/// Shared state of a fault_storage and its writers.
struct fault_state {
    std::mutex mutex;
    std::uint64_t budget = UINT64_MAX; // bytes that may still be written
    bool full = false;                 // set by the first write that did not fit
    std::vector<std::string> log;      // "commit <key>", "put <key>"

    /// Takes `n` bytes of the budget, or throws as a full disk would.
    void take(std::uint64_t n, const std::string& key) {
        std::lock_guard<std::mutex> lock(mutex);
        if (full || n > budget) {
            full = true;
            throw storage_error("cannot write " + key + ": No space left on device (simulated)");
        }
        budget -= n;
    }
    void free_space() {
        std::lock_guard<std::mutex> lock(mutex);
        budget = UINT64_MAX;
        full = false;
    }
    void published(std::string entry) {
        std::lock_guard<std::mutex> lock(mutex);
        log.push_back(std::move(entry));
    }
    std::vector<std::string> entries() {
        std::lock_guard<std::mutex> lock(mutex);
        return log;
    }
};

class fault_storage {
public:
    fault_storage(std::filesystem::path root, std::shared_ptr<fault_state> state)
        : inner_(std::move(root)), state_(std::move(state)) {}

    class writer {
    public:
        writer(local_storage::writer inner, std::shared_ptr<fault_state> state, std::string key)
            : inner_(std::move(inner)), state_(std::move(state)), key_(std::move(key)) {}
        void append(std::string_view bytes) {
            state_->take(bytes.size(), key_);
            inner_.append(bytes);
        }
        void commit() {
            inner_.commit();
            state_->published("commit " + key_);
        }

    private:
        local_storage::writer inner_;
        std::shared_ptr<fault_state> state_;
        std::string key_;
    };

    void put(const std::string& key, std::string_view bytes) {
        state_->take(bytes.size(), key);
        inner_.put(key, bytes);
        state_->published("put " + key);
    }
    writer open_write(const std::string& key) { return writer(inner_.open_write(key), state_, key); }
    [[nodiscard]] std::string read(const std::string& key) const { return inner_.read(key); }
    [[nodiscard]] std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const {
        return inner_.read_range(key, offset, length);
    }
    [[nodiscard]] std::vector<std::string> list(const std::string& prefix, const std::string& start_after) const {
        return inner_.list(prefix, start_after);
    }
    [[nodiscard]] bool exists(const std::string& key) const { return inner_.exists(key); }
    [[nodiscard]] std::string describe() const { return "fault:" + inner_.describe(); }
    void remove(const std::string& key) const {
        inner_.remove(key);
        state_->published("remove " + key);
    }

private:
    local_storage inner_;
    std::shared_ptr<fault_state> state_;
};

static_assert(is_storage_v<fault_storage>, "fault_storage must satisfy the storage concept");

} // namespace tdbg::test
