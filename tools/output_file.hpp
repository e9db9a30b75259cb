#pragma once
// Where a subcommand puts a document it was asked to write to a file
// (`report -o FILE`, `rules --junit FILE`, `rules -o FILE`): one rule for every
// such option, so that none of them replaces what it should write through.

#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tdbg::cli {

/// Writes `bytes` to the output `path` names:
///   - "-": the standard output, `out` (its errors are checked when the program ends);
///   - a symbolic link: written through where the kernel would follow it with
///     fs.protected_symlinks = 1 (the link is ours, or its directory is not both sticky
///     and world-writable, or the link is the directory owner's); the file it points to
///     is replaced as a regular file is, in that file's directory, and the link stays a
///     link. Another user's link in a sticky, world-writable directory is refused;
///   - an existing file that is not a regular file (a FIFO, a character device
///     such as /dev/null): opened and written, never replaced;
///   - a regular file or a path that does not exist yet: replaced atomically (a
///     temporary file in the same directory, renamed over it), so a reader sees
///     the old document or the whole new one, with the old file's permissions.
/// Throws tdbg::error naming `path` and the reason when it cannot be written;
/// the temporary file is removed on any failure.
void write_output(const std::string& path, std::string_view bytes, std::ostream& out);

/// The output `path` names opened for writing a stream (`rules --progress`): created or
/// truncated, its links followed by write_output's rule, and never a link placed at the
/// target meanwhile (O_NOFOLLOW). Throws tdbg::error naming `path` and the reason.
[[nodiscard]] std::FILE* open_output_stream(const std::string& path);

/// An output file option and the path it was given ("--junit", "results.xml").
struct output_option {
    std::string option;
    std::string path;
};

/// Refuses, before anything is read or written, an output that would overwrite what the
/// command reads: a path inside one of the local `runs` (a URL names no local file), or the
/// same file as one of `files` (a configuration) or as another output, compared once symbolic
/// links are followed, and by device and inode for hard links. "-" (standard output) and files
/// that are not regular (a FIFO, /dev/null) are written in place and never refused. Throws
/// tdbg::error (exit status 2) naming the option, the path and what it would overwrite.
void check_outputs(const std::vector<output_option>& outputs, const std::vector<std::string>& runs,
                   const std::vector<std::string>& files);

} // namespace tdbg::cli
