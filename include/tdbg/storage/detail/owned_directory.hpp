#pragma once
/// \file
/// Writing on a shared machine (docs/reliability.md, "A shared machine: nobody else's links or
/// directories"): the directories a writer creates files in, and the symbolic links it follows,
/// must be ones no other user can have placed or redirected. POSIX only.
///
/// - A directory is trusted when it belongs to this process's user (or to root) and no one else
///   may write into it, or when it is sticky (/tmp): there another user can neither remove nor
///   rename what the writer made, and the writer only creates new files inside (O_EXCL,
///   O_NOFOLLOW, names nobody can guess). Group write is tolerated for a user private group
///   (the group named as its one user, whose primary group it is, with no other members: the
///   umask 002 of some distributions).
/// - A symbolic link is followed only where the kernel follows one with
///   `fs.protected_symlinks` = 1: the link is this user's, or its directory is not both sticky
///   and world-writable, or the link belongs to the directory's owner.
///
/// As root, "another user" is any user but root: a run of root's in a directory another user
/// made is refused as anyone's is.

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__linux__) && __has_include(<sys/random.h>)
#include <sys/random.h>
#define TDBG_HAVE_GETRANDOM 1
#endif

#include <fmt/core.h>

#include "tdbg/core/error.hpp"

namespace tdbg::detail {

// A user for messages: "nobody (uid 65534)", or "uid 1234" where the name is unknown.
inline std::string user_description(uid_t uid) {
    std::vector<char> buffer(1024);
    for (;;) {
        struct passwd entry {};
        struct passwd* found = nullptr;
        const int e = ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found);
        if (e == ERANGE && buffer.size() < (std::size_t{1} << 20U)) {
            buffer.resize(buffer.size() * 2);
            continue;
        }
        if (e != 0 || found == nullptr) {
            return fmt::format("uid {}", uid);
        }
        return fmt::format("{} (uid {})", found->pw_name, uid);
    }
}

// True when `gid` is `uid`'s user private group: its primary group, named as the user, with
// no other members listed. Group write there gives no one else a way in.
inline bool is_user_private_group(uid_t uid, gid_t gid) {
    std::vector<char> user_buffer(1024);
    std::vector<char> group_buffer(4096);
    struct passwd user {};
    struct passwd* user_found = nullptr;
    int e = 0;
    while ((e = ::getpwuid_r(uid, &user, user_buffer.data(), user_buffer.size(), &user_found)) == ERANGE &&
           user_buffer.size() < (std::size_t{1} << 20U)) {
        user_buffer.resize(user_buffer.size() * 2);
    }
    if (e != 0 || user_found == nullptr || user.pw_gid != gid) {
        return false;
    }
    struct group group {};
    struct group* group_found = nullptr;
    while ((e = ::getgrgid_r(gid, &group, group_buffer.data(), group_buffer.size(), &group_found)) == ERANGE &&
           group_buffer.size() < (std::size_t{1} << 24U)) {
        group_buffer.resize(group_buffer.size() * 2);
    }
    if (e != 0 || group_found == nullptr || std::strcmp(group.gr_name, user.pw_name) != 0) {
        return false;
    }
    return group.gr_mem == nullptr || group.gr_mem[0] == nullptr ||
           (std::strcmp(group.gr_mem[0], user.pw_name) == 0 && group.gr_mem[1] == nullptr);
}

// Empty when files may be created in the directory `path`, whose status is `st`; else the
// message of the refusal, naming the directory and its owner.
inline std::string untrusted_directory(const std::string& path, const struct stat& st) {
    const uid_t me = ::geteuid();
    if (st.st_uid != me && st.st_uid != 0) {
        return fmt::format("{}: a directory owned by {}, not by {}, the user writing: refused (another user's "
                           "directory can hold links that redirect what is written there; write into a directory of "
                           "your own)",
                           path, user_description(st.st_uid), user_description(me));
    }
    if ((st.st_mode & S_ISVTX) != 0) {
        return {}; // others may add entries, but not remove or rename this user's
    }
    const bool others_write = (st.st_mode & S_IWOTH) != 0;
    const bool group_write = (st.st_mode & S_IWGRP) != 0 && !is_user_private_group(st.st_uid, st.st_gid);
    if (!others_write && !group_write) {
        return {};
    }
    return fmt::format("{}: a directory of {} that {} can write into (mode {:04o}), and not sticky: refused (they "
                       "could place links that redirect what is written there; remove their write permission, or "
                       "make it sticky, chmod +t)",
                       path, user_description(st.st_uid), others_write ? "every user" : "its group",
                       static_cast<unsigned>(st.st_mode & 07777U));
}

// Empty when the symbolic link `link`, owned by `link_uid`, may be followed out of the
// directory `dir` whose status is `dir_st` (the kernel's fs.protected_symlinks rule); else the
// message of the refusal, naming the link and its owner.
inline std::string unfollowable_link(const std::string& link, uid_t link_uid, const std::string& dir,
                                     const struct stat& dir_st) {
    const uid_t me = ::geteuid();
    const bool shared_sticky = (dir_st.st_mode & S_ISVTX) != 0 && (dir_st.st_mode & S_IWOTH) != 0;
    if (link_uid == me || !shared_sticky || link_uid == dir_st.st_uid) {
        return {};
    }
    return fmt::format("{}: a symbolic link owned by {} in the sticky, world-writable directory {}: refused, not "
                       "followed (another user's link there could name any file of {}, as the kernel's "
                       "fs.protected_symlinks refuses it)",
                       link, user_description(link_uid), dir, user_description(me));
}

// Sixteen hex digits nobody can guess, for a temporary file's name: another user who could
// foresee the name could place a link or a file there first (O_EXCL then refuses it, but the
// writer would have to try name after name). The random bytes are drawn from the kernel 32
// names at a time, per thread (the names also hold the process id, so a forked child that
// inherits the rest of a draw still names its files apart).
inline std::string unguessable_suffix() {
    constexpr std::size_t draw = 32;
    thread_local std::array<std::uint64_t, draw> pool{};
    thread_local std::size_t left = 0;
    if (left == 0) {
        constexpr auto bytes = static_cast<ssize_t>(sizeof pool);
        bool got = false;
#if defined(TDBG_HAVE_GETRANDOM)
        got = ::getrandom(pool.data(), sizeof pool, 0) == bytes;
#endif
        if (!got) {
            const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                got = ::read(fd, pool.data(), sizeof pool) == bytes;
                ::close(fd);
            }
        }
        if (!got) {
            throw storage_error("cannot name a temporary file: no random bytes (getrandom and /dev/urandom failed)");
        }
        left = draw;
    }
    --left;
    const std::uint64_t bits = std::exchange(pool[left], 0); // used once, then forgotten
    return fmt::format("{:016x}", bits);
}

// The directories of one run below its root that were checked (and made where missing) for
// writing: each is checked once, on its first file, then trusted (no other user can change a
// directory that is this user's and closed to others, nor rename it in a sticky one).
class trusted_directories {
public:
    explicit trusted_directories(std::filesystem::path root) : root_(root.empty() ? "." : std::move(root)) {}

    // Forgets what was checked: a directory removed since (a run written again) is made and
    // checked anew.
    void forget() {
        const std::lock_guard<std::mutex> lock(mutex_);
        root_done_ = false;
        done_.clear();
    }

    // Makes the directory `rel` below the root (a key's directory part, "" for the root itself)
    // and every directory on the way, and checks each as the file's comment says; a
    // storage_error names the first that is refused.
    void prepare(std::string_view rel) {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (done_.count(std::string(rel)) != 0) {
            return;
        }
        std::string at;
        if (!root_done_) {
            struct stat root {};
            check_root(root);
            root_done_ = true;
        }
        std::size_t start = 0;
        while (start < rel.size()) {
            std::size_t end = rel.find('/', start);
            if (end == std::string_view::npos) {
                end = rel.size();
            }
            at.assign(rel.substr(0, end));
            start = end + 1;
            if (done_.count(at) == 0) {
                check_below(path_of(at));
                done_.insert(at);
            }
        }
        done_.insert(std::string(rel));
    }

private:
    [[noreturn]] static void fail_errno(std::string_view doing, const std::string& path, int code) {
        throw storage_error(fmt::format("{} {}: {}", doing, path, std::strerror(code)));
    }

    std::string path_of(const std::string& rel) const { return (root_ / rel).string(); }

    // The root: made with its parents where missing (directories above the run are the
    // caller's choice, not checked), followed if a link the rule allows, then checked.
    void check_root(struct stat& out) {
        const std::string path = root_.string();
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) {
            std::error_code ec;
            std::filesystem::create_directories(root_, ec);
            if (ec) {
                throw storage_error(fmt::format("cannot create directory {}: {}", path, ec.message()));
            }
        }
        if (::lstat(path.c_str(), &st) != 0) {
            fail_errno("cannot open the directory", path, errno);
        }
        if (S_ISLNK(st.st_mode)) {
            const std::filesystem::path above = root_.has_parent_path() ? root_.parent_path() : ".";
            struct stat dir {};
            if (::stat(above.c_str(), &dir) != 0) {
                fail_errno("cannot open the directory", above.string(), errno);
            }
            if (std::string why = unfollowable_link(path, st.st_uid, above.string(), dir); !why.empty()) {
                throw storage_error(why);
            }
            if (::stat(path.c_str(), &st) != 0) {
                fail_errno("cannot open the directory", path, errno);
            }
        }
        check_directory(path, st);
        out = st;
    }

    // A directory below one already checked: made where missing, its link (if one) checked
    // against the directory above, then itself checked.
    static void check_below(const std::string& path) {
        if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) {
            fail_errno("cannot create directory", path, errno);
        }
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) {
            fail_errno("cannot open the directory", path, errno);
        }
        if (S_ISLNK(st.st_mode)) {
            const std::string above = std::filesystem::path(path).parent_path().string();
            struct stat parent {};
            if (::stat(above.c_str(), &parent) != 0) {
                fail_errno("cannot open the directory", above, errno);
            }
            if (std::string why = unfollowable_link(path, st.st_uid, above, parent); !why.empty()) {
                throw storage_error(why);
            }
            if (::stat(path.c_str(), &st) != 0) {
                fail_errno("cannot open the directory", path, errno);
            }
        }
        check_directory(path, st);
    }

    static void check_directory(const std::string& path, const struct stat& st) {
        if (!S_ISDIR(st.st_mode)) {
            throw storage_error(fmt::format("cannot create directory {}: {}", path, std::strerror(ENOTDIR)));
        }
        if (std::string why = untrusted_directory(path, st); !why.empty()) {
            throw storage_error(why);
        }
    }

    std::filesystem::path root_;
    std::mutex mutex_;
    bool root_done_ = false;
    std::unordered_set<std::string> done_; // directories below the root, as keys name them
};

} // namespace tdbg::detail
