#pragma once
/// \file
/// The local filesystem backend: a directory is the run's root.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

namespace detail {
class local_root;
class trusted_directories;
} // namespace detail

/// Stores objects as files below a root directory. Objects are written to a
/// `*.tmp` file and renamed into place on commit, so readers never see a
/// partial object; with `durable`, files and their directories are fsync'ed.
/// Has both optional capabilities: `open_read` (a descriptor and pread) and a
/// listing that reads only the directories at or after `start_after`.
///
/// Reading is strict, so that a run that cannot be read is never taken for a
/// run with less in it: an object or a listed key that is not a regular file
/// (a FIFO, a device, a socket), a symbolic link that leads out of the root,
/// and a directory that cannot be listed are `storage_error`s naming the path
/// (and where the link leads). Links that stay below the root are followed.
/// The root directory is opened on the first read and held (copies share it).
///
/// Writing follows no one else's link (docs/reliability.md, "A shared machine"): a temporary
/// file is created new (O_EXCL, O_NOFOLLOW) under a name nobody can guess, and a directory
/// that a file is written into, the root's and each one below on the way, is made where
/// missing and checked on its first file: one that another user owns, or can write into
/// without its sticky bit, or a link of another user's in a sticky world-writable directory,
/// is a storage_error naming it and its owner.
class local_storage {
public:
    struct options {
        /// fsync each file before its rename and the directory after it.
        bool durable = false;
        /// The largest object read() reads whole (index, collections and other small
        /// files; event files are read by ranges): a larger one is a storage_error
        /// before it is read, so a damaged or hostile run cannot fill memory.
        std::uint64_t max_read_bytes = std::uint64_t{256} << 20U;
    };

    explicit local_storage(std::filesystem::path root) : local_storage(std::move(root), options{}) {}
    TDBG_DECL local_storage(std::filesystem::path root, options opts);

    /// Writes one object; `commit()` publishes it atomically. Destroyed
    /// uncommitted, it removes its temporary file.
    class writer {
    public:
        writer(const writer&) = delete;
        writer& operator=(const writer&) = delete;
        TDBG_DECL writer(writer&& other) noexcept;
        writer& operator=(writer&&) = delete;
        TDBG_DECL ~writer();

        /// Appends bytes to the object.
        TDBG_DECL void append(std::string_view bytes);
        /// Bytes appended so far.
        [[nodiscard]] std::uint64_t size() const noexcept { return written_; }
        /// Publishes the object under its final name.
        TDBG_DECL void commit();

    private:
        friend class local_storage;
        // Creates the temporary file of `final_path` in `key_dir` below the root (a key's
        // directory part), that directory made and checked by `dirs` first.
        TDBG_DECL writer(std::filesystem::path final_path, bool durable, detail::trusted_directories& dirs,
                         std::string_view key_dir);
        // Publishes the file: renamed over what has its name (`replace`), or linked to its name
        // only when nothing has it; false when something had (the temporary file is removed).
        TDBG_DECL bool publish(bool replace);
        // Removes the temporary file (found through `held`, a descriptor of it, where its
        // directory has moved) and throws the storage_error of `what`'s failure.
        [[noreturn]] TDBG_DECL void fail_commit(const char* what, int held);

        std::filesystem::path final_;
        std::filesystem::path temp_;
        int fd_ = -1;
        bool durable_ = false;
        std::uint64_t written_ = 0;
    };

    /// A regular file opened for positional reads (pread); its size is the file's when opened.
    class reader {
    public:
        reader(const reader&) = delete;
        reader& operator=(const reader&) = delete;
        TDBG_DECL reader(reader&& other) noexcept;
        reader& operator=(reader&&) = delete;
        TDBG_DECL ~reader();

        /// The file's size when it was opened.
        [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
        /// Fills `out[0, length)` from `offset`; throws storage_error past the end.
        TDBG_DECL void read_at(std::uint64_t offset, char* out, std::size_t length) const;

    private:
        friend class local_storage;
        TDBG_DECL reader(int fd, std::string path);

        std::string path_;
        int fd_ = -1;
        std::uint64_t size_ = 0;
    };

    /// The root directory.
    [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }
    /// The root, for messages.
    [[nodiscard]] std::string describe() const { return root_.string(); }

    /// Starts writing `key`.
    [[nodiscard]] TDBG_DECL writer open_write(const std::string& key) const;
    /// Writes and publishes `key` in one call.
    TDBG_DECL void put(const std::string& key, std::string_view bytes) const;
    /// The whole object.
    [[nodiscard]] TDBG_DECL std::string read(const std::string& key) const;
    /// `length` bytes from `offset`; throws storage_error when the object is shorter.
    [[nodiscard]] TDBG_DECL std::string read_range(const std::string& key, std::uint64_t offset, std::uint64_t length) const;
    /// `key` opened for positional reads.
    [[nodiscard]] TDBG_DECL reader open_read(const std::string& key) const;
    /// Published keys starting with `prefix`, sorted, greater than `start_after`. Only the
    /// directories that can hold such keys are read (a live run's index is polled by its
    /// last directories, not walked whole). A directory that does not exist holds no keys;
    /// one that cannot be read, or a key that is not a regular file, is a storage_error.
    [[nodiscard]] TDBG_DECL std::vector<std::string> list(const std::string& prefix, const std::string& start_after = {}) const;
    /// True when `key` is published (a regular file).
    [[nodiscard]] TDBG_DECL bool exists(const std::string& key) const;
    /// Publishes `key` only when no file has that name (the storage concept's put_if_absent
    /// capability): written to a temporary file, then hard-linked to its name, which fails
    /// atomically when the name exists. False, and nothing left behind, when it did.
    [[nodiscard]] TDBG_DECL bool put_if_absent(const std::string& key, std::string_view bytes) const;
    /// Removes the file `key` (the storage concept's remove capability); no error when it is absent.
    TDBG_DECL void remove(const std::string& key) const;

private:
    [[nodiscard]] TDBG_DECL std::filesystem::path path_of(const std::string& key) const;
    [[nodiscard]] TDBG_DECL std::string file_of(const std::string& key) const;
    TDBG_DECL void check_read_size(const std::string& key, std::uint64_t size) const;
    // `key` (validated) opened with `flags`, below the root: see the class comment.
    [[nodiscard]] TDBG_DECL int open_key(const std::string& key, int flags) const;

    std::filesystem::path root_;
    options options_;
    std::shared_ptr<const detail::local_root> dir_; // the root, opened on the first read
    std::shared_ptr<detail::trusted_directories> written_; // the directories checked for writing
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/storage/impl/local_storage.ipp"
#endif
