#pragma once
// A storage for the writer's tests: local files underneath, plus a gate that
// holds writes back, injected failures, and a log of what was published.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::test {

struct storage_control {
    std::mutex mutex;
    std::condition_variable opened;
    bool gate_open = true;
    int failing_appends = 0; // the next n appends throw
    bool failing_puts = false;
    std::vector<std::string> log; // "append <key>" (the first of each file), "commit <key>", "put <key>", "remove <key>"
    std::string held_key;         // appends to this key wait until release_held()
    std::vector<std::thread::id> exists_calls; // the thread of each exists() call
    // exists() of this key answers (what it found before the hold) once release_exists() is
    // called, or after exists_hold_limit, a bound for a failing test: then exists_held_too_long
    // is set, and no later call is held.
    std::string held_exists_key;
    std::chrono::milliseconds exists_hold_limit{0};
    bool exists_held_too_long = false;

    void hold(std::string key) {
        std::lock_guard<std::mutex> lock(mutex);
        held_key = std::move(key);
    }
    void release_held() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            held_key.clear();
        }
        opened.notify_all();
    }
    void wait_if_held(const std::string& key) {
        std::unique_lock<std::mutex> lock(mutex);
        opened.wait(lock, [&] { return held_key != key; });
    }

    void hold_exists(std::string key, std::chrono::milliseconds limit) {
        std::lock_guard<std::mutex> lock(mutex);
        held_exists_key = std::move(key);
        exists_hold_limit = limit;
    }
    void release_exists() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            held_exists_key.clear();
        }
        opened.notify_all();
    }
    // Waits until exists() has been called `n` times, for at most `limit`; false when it was not.
    bool wait_for_exists_calls(std::size_t n, std::chrono::milliseconds limit) {
        std::unique_lock<std::mutex> lock(mutex);
        return opened.wait_for(lock, limit, [&] { return exists_calls.size() >= n; });
    }

    void wait_for_gate() {
        std::unique_lock<std::mutex> lock(mutex);
        opened.wait(lock, [&] { return gate_open; });
    }
    void set_gate(bool open) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            gate_open = open;
        }
        opened.notify_all();
    }
    std::vector<std::string> published() {
        std::lock_guard<std::mutex> lock(mutex);
        return log;
    }
};

class test_storage {
public:
    test_storage(std::filesystem::path root, std::shared_ptr<storage_control> control)
        : inner_(std::move(root)), control_(std::move(control)) {}

    class writer {
    public:
        writer(local_storage::writer inner, std::shared_ptr<storage_control> control, std::string key)
            : inner_(std::move(inner)), control_(std::move(control)), key_(std::move(key)) {}
        void append(std::string_view bytes) {
            control_->wait_for_gate();
            control_->wait_if_held(key_);
            {
                std::lock_guard<std::mutex> lock(control_->mutex);
                if (control_->failing_appends > 0) {
                    --control_->failing_appends;
                    throw storage_error("injected: cannot write " + key_);
                }
            }
            inner_.append(bytes);
            if (!appended_) {
                appended_ = true;
                std::lock_guard<std::mutex> lock(control_->mutex);
                control_->log.push_back("append " + key_);
            }
        }
        void commit() {
            control_->wait_for_gate();
            inner_.commit();
            std::lock_guard<std::mutex> lock(control_->mutex);
            control_->log.push_back("commit " + key_);
        }

    private:
        local_storage::writer inner_;
        std::shared_ptr<storage_control> control_;
        std::string key_;
        bool appended_ = false;
    };

    void put(const std::string& key, std::string_view bytes) {
        control_->wait_for_gate();
        {
            std::lock_guard<std::mutex> lock(control_->mutex);
            if (control_->failing_puts) {
                throw storage_error("injected: cannot put " + key);
            }
        }
        inner_.put(key, bytes);
        std::lock_guard<std::mutex> lock(control_->mutex);
        control_->log.push_back("put " + key);
    }
    // The hook's claim of its worker, made by its constructor: not held by the gate, which holds
    // back the writer threads' writes.
    bool put_if_absent(const std::string& key, std::string_view bytes) const { return inner_.put_if_absent(key, bytes); }
    writer open_write(const std::string& key) { return writer(inner_.open_write(key), control_, key); }
    std::string read(const std::string& key) const { return inner_.read(key); }
    std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const {
        return inner_.read_range(key, offset, length);
    }
    std::vector<std::string> list(const std::string& prefix, const std::string& start_after) const {
        return inner_.list(prefix, start_after);
    }
    bool exists(const std::string& key) const {
        const bool found = inner_.exists(key);
        std::unique_lock<std::mutex> lock(control_->mutex);
        control_->exists_calls.push_back(std::this_thread::get_id());
        control_->opened.notify_all();
        if (key == control_->held_exists_key &&
            !control_->opened.wait_for(lock, control_->exists_hold_limit,
                                       [&] { return key != control_->held_exists_key; })) {
            control_->exists_held_too_long = true;
            control_->held_exists_key.clear();
        }
        return found;
    }
    std::string describe() const { return "test:" + inner_.describe(); }
    void remove(const std::string& key) const {
        inner_.remove(key);
        std::lock_guard<std::mutex> lock(control_->mutex);
        control_->log.push_back("remove " + key);
    }

private:
    local_storage inner_;
    std::shared_ptr<storage_control> control_;
};

static_assert(is_storage_v<test_storage>, "test_storage must satisfy the storage concept");

} // namespace tdbg::test
