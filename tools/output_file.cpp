// Writing a subcommand's output file (output_file.hpp).

#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/storage/detail/owned_directory.hpp"

namespace tdbg::cli {

namespace {

namespace fs = std::filesystem;

// Symbolic links followed before giving up (Linux's own limit).
constexpr int max_links = 40;

// What the messages call the output: the path given, and the file it links to, if it does.
struct output_name {
    std::string given;
    fs::path target;

    [[nodiscard]] std::string describe() const {
        return target.string() == given ? given : fmt::format("{} (a link to {})", given, target.string());
    }
    [[noreturn]] void fail(std::string_view reason) const {
        throw tdbg::error(fmt::format("cannot write {}: {}", describe(), reason));
    }
    [[noreturn]] void fail_errno(std::string_view doing, int code) const {
        fail(fmt::format("{}{}", doing.empty() ? "" : fmt::format("{}: ", doing), std::strerror(code)));
    }
};

// The path `given` leads to once every symbolic link on it is followed; a dangling
// link leads to the path it names, which is then created. A link is followed only where the
// kernel follows one with fs.protected_symlinks = 1 (tdbg/storage/detail/owned_directory.hpp):
// another user's link in a sticky, world-writable directory (/tmp) is refused, naming it and
// its owner, since it could name any file of ours (the rename below replaces the file it
// names, which the kernel's protection never sees).
fs::path follow_links(const output_name& name) {
    fs::path p(name.given);
    for (int hops = 0; hops <= max_links; ++hops) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
            return p;
        }
        const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
        struct stat dir_st {};
        if (::stat(dir.c_str(), &dir_st) != 0) {
            name.fail_errno(fmt::format("cannot read the directory {}", dir.string()), errno);
        }
        if (const std::string why = tdbg::detail::unfollowable_link(p.string(), st.st_uid, dir.string(), dir_st);
            !why.empty()) {
            throw tdbg::error(fmt::format("cannot write {}: {}", name.given, why));
        }
        std::error_code ec;
        const fs::path to = fs::read_symlink(p, ec);
        if (ec) {
            name.fail(fmt::format("cannot read the symbolic link {}: {}", p.string(), ec.message()));
        }
        p = to.is_absolute() ? to : p.parent_path() / to;
    }
    name.fail_errno("", ELOOP);
}

// Writes every byte to `fd`; the errno of the first failure, or 0.
int write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

// A FIFO, a device: written where it is, as a shell's `>` would.
void write_in_place(const output_name& name, std::string_view bytes) {
    const int fd = ::open(name.target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        name.fail_errno("", errno);
    }
    const int written = write_all(fd, bytes);
    const int closed = ::close(fd) == 0 ? 0 : errno;
    if (written != 0 || closed != 0) {
        name.fail_errno("", written != 0 ? written : closed);
    }
}

// A file created next to the target, removed unless it was renamed into place.
class temporary_file {
public:
    explicit temporary_file(const output_name& name) : name_(name) {
        const fs::path dir = name.target.has_parent_path() ? name.target.parent_path() : fs::path(".");
        // A long name keeps room for the suffix within the 255 bytes a file name may have.
        const std::string base = name.target.filename().string().substr(0, 128);
        // A name nobody can foresee, created new and never through a link (O_EXCL, O_NOFOLLOW).
        for (int attempt = 0; fd_ < 0; ++attempt) {
            path_ = dir / fmt::format(".{}.{}.{}.tmp", base, ::getpid(), tdbg::detail::unguessable_suffix());
            fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
            if (fd_ < 0 && (errno != EEXIST || attempt == 8)) {
                name.fail_errno(fmt::format("cannot create a file in {}", dir.string()), errno);
            }
        }
    }
    temporary_file(const temporary_file&) = delete;
    temporary_file& operator=(const temporary_file&) = delete;
    ~temporary_file() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        if (!renamed_) {
            ::unlink(path_.c_str());
        }
    }

    void write(std::string_view bytes, std::optional<mode_t> permissions) {
        if (const int e = write_all(fd_, bytes); e != 0) {
            name_.fail_errno("", e);
        }
        if (permissions && ::fchmod(fd_, *permissions) != 0) {
            name_.fail_errno("cannot keep its permissions", errno);
        }
        // On disk before it replaces the old file (some file systems cannot sync: EINVAL).
        if (::fsync(fd_) != 0 && errno != EINVAL) {
            name_.fail_errno("", errno);
        }
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) {
            name_.fail_errno("", errno);
        }
    }

    void rename_over_target() {
        if (::rename(path_.c_str(), name_.target.c_str()) != 0) {
            name_.fail_errno("cannot replace it", errno);
        }
        renamed_ = true;
    }

private:
    const output_name& name_;
    fs::path path_;
    int fd_ = -1;
    bool renamed_ = false;
};

} // namespace

void write_output(const std::string& path, std::string_view bytes, std::ostream& out) {
    if (path == "-") {
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return;
    }
    output_name name{path, {}};
    name.target = follow_links(name);
    std::optional<mode_t> permissions;
    struct stat st {};
    if (::stat(name.target.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            name.fail("it is a directory");
        }
        if (!S_ISREG(st.st_mode)) {
            write_in_place(name, bytes);
            return;
        }
        // Another user's file (in a sticky directory, where root may replace it) does not lend
        // the document its permissions: its owner may have opened it to everyone.
        if (st.st_uid == ::geteuid()) {
            permissions = st.st_mode & 07777;
        }
    } else if (errno != ENOENT) {
        name.fail_errno("", errno);
    }
    temporary_file file(name);
    file.write(bytes, permissions);
    file.rename_over_target();
}

std::FILE* open_output_stream(const std::string& path) {
    output_name name{path, {}};
    name.target = follow_links(name);
    // O_NOFOLLOW: a link placed at the target since it was looked at is refused, not followed.
    const int fd = ::open(name.target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd < 0) {
        name.fail_errno("", errno);
    }
    std::FILE* file = ::fdopen(fd, "w");
    if (file == nullptr) {
        const int saved = errno;
        ::close(fd);
        name.fail_errno("", saved);
    }
    return file;
}

namespace {

// Where `path` leads once links are followed, as an absolute path without . or .. (the parts
// that do not exist yet taken as written).
fs::path resolved(const std::string& path) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? fs::absolute(path).lexically_normal() : p;
}

// Whether `inner` is `outer` or lies beneath it.
bool within(const fs::path& inner, const fs::path& outer) {
    auto i = inner.begin();
    for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
        if (o->empty()) {
            continue; // a trailing separator
        }
        if (i == inner.end() || *i != *o) {
            return false;
        }
    }
    return true;
}

// The existing regular file `path` leads to, as (device, inode); nothing for anything else.
std::optional<std::pair<dev_t, ino_t>> regular_file_id(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return std::nullopt;
    }
    return std::pair<dev_t, ino_t>{st.st_dev, st.st_ino};
}

// True where `path` is written in place (an existing FIFO or device), never replaced.
bool written_in_place(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

} // namespace

void check_outputs(const std::vector<output_option>& outputs, const std::vector<std::string>& runs,
                   const std::vector<std::string>& files) {
    const auto same_file = [](const std::string& a, const std::string& b) {
        const auto ia = regular_file_id(a);
        return resolved(a) == resolved(b) || (ia && ia == regular_file_id(b));
    };
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const output_option& o = outputs[i];
        if (o.path == "-" || written_in_place(o.path)) {
            continue;
        }
        const fs::path target = resolved(o.path);
        for (const std::string& run : runs) {
            if (run.find("://") != std::string::npos) {
                continue;
            }
            if (within(target, resolved(run))) {
                throw tdbg::error(fmt::format("{} {}: refused, it lies inside the run {} that this command reads "
                                              "(writing it would change the run); write it elsewhere",
                                              o.option, o.path, run));
            }
        }
        for (const std::string& file : files) {
            if (same_file(o.path, file)) {
                throw tdbg::error(fmt::format("{} {}: refused, it is the file {} that this command reads; write it "
                                              "elsewhere",
                                              o.option, o.path, file));
            }
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (outputs[j].path != "-" && same_file(o.path, outputs[j].path)) {
                throw tdbg::error(fmt::format("{} {} and {} {} name the same file: one would replace the other",
                                              outputs[j].option, outputs[j].path, o.option, o.path));
            }
        }
    }
}

} // namespace tdbg::cli
