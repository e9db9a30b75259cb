#pragma once
// A shared machine in a test (docs/reliability.md, "A shared machine: nobody else's links or
// directories"): a sticky, world-writable folder like /tmp, owned by the test; a victim's private
// files (mode 0600 in a 0700 folder); and a second user (65534, "nobody", through
// run_unprivileged) who gets there first, making directories, links and files. The test itself
// is the victim, so it must be root to have a second user: elsewhere it skips, saying so.

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "storage/unprivileged.hpp"
#include "support.hpp"

namespace tdbg::test {

class shared_machine {
public:
    explicit shared_machine(const std::string& tag) : scratch_(tag) {
        namespace fs = std::filesystem;
        shared_ = scratch_.path() / "shared";
        private_ = scratch_.path() / "private";
        fs::create_directory(shared_);
        fs::create_directory(private_);
        // chmod, not the umask's mode: 01777 as /tmp, 0700 as a home directory.
        fs::permissions(shared_, fs::perms::all | fs::perms::sticky_bit);
        fs::permissions(private_, fs::perms::owner_all);
    }

    /// Empty when a second user can act here; else why not, for the test's skip.
    [[nodiscard]] std::string why_not() const {
        if (::geteuid() != 0) {
            return "not running as root: there is no second user to place links and directories as (CI runs as root)";
        }
        return scratch_.why_unreachable();
    }

    /// The sticky, world-writable folder (mode 01777, the test's).
    [[nodiscard]] const std::filesystem::path& shared() const noexcept { return shared_; }

    /// A file of the victim's, `name` in the private folder, holding `bytes`, mode 0600.
    std::filesystem::path victim_file(const std::string& name, const std::string& bytes) {
        const std::filesystem::path p = private_ / name;
        write_file(p, bytes);
        std::filesystem::permissions(p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
        victims_.emplace_back(p, bytes);
        return p;
    }

    /// Empty when every victim file holds what it held, with mode 0600, and the private folder
    /// holds nothing else; else what changed.
    [[nodiscard]] std::string victim_changes() const {
        std::string out;
        for (const auto& [path, bytes] : victims_) {
            struct stat st {};
            if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
                out += path.string() + " is gone or no longer a regular file; ";
                continue;
            }
            if ((st.st_mode & 07777) != 0600) {
                out += path.string() + " has mode " + std::to_string(st.st_mode & 07777) + "; ";
            }
            if (const std::string now = read_file(path); now != bytes) {
                out += path.string() + " holds " + std::to_string(now.size()) + " other bytes; ";
            }
        }
        std::size_t files = 0;
        for (const auto& entry : std::filesystem::directory_iterator(private_)) {
            (void)entry;
            ++files;
        }
        if (files != victims_.size()) {
            out += "the private folder holds " + std::to_string(files) + " files, not " + std::to_string(victims_.size());
        }
        return out;
    }

    /// Runs `plant` as the second user; true when it returned 0 (else it said why on stderr).
    [[nodiscard]] static bool as_other_user(const std::function<int()>& plant) {
        const auto status = run_unprivileged(plant);
        return status && *status == 0;
    }

private:
    unprivileged_scratch scratch_;
    std::filesystem::path shared_;
    std::filesystem::path private_;
    std::vector<std::pair<std::filesystem::path, std::string>> victims_;
};

// For code the second user runs (0, or 1 with the reason on stderr): a directory with `mode`,
// whatever the umask.
inline int make_directory(const std::filesystem::path& p, mode_t mode) {
    if (::mkdir(p.c_str(), mode) != 0 || ::chmod(p.c_str(), mode) != 0) {
        std::perror(p.c_str());
        return 1;
    }
    return 0;
}

// A symbolic link at `link` to `target`.
inline int make_link(const std::filesystem::path& target, const std::filesystem::path& link) {
    if (::symlink(target.c_str(), link.c_str()) != 0) {
        std::perror(link.c_str());
        return 1;
    }
    return 0;
}

// A regular file at `p` holding `bytes`, with `mode`.
inline int make_file(const std::filesystem::path& p, const std::string& bytes, mode_t mode) {
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0 ||
        ::chmod(p.c_str(), mode) != 0) {
        std::perror(p.c_str());
        return 1;
    }
    return 0;
}

} // namespace tdbg::test
