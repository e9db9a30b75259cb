#pragma once
// Where a subcommand puts a document it was asked to write to a file
// (`report -o FILE`, `rules --junit FILE`, `rules -o FILE`): one rule for every
// such option, so that none of them replaces what it should write through.

#include <ostream>
#include <string>
#include <string_view>

namespace tdbg::cli {

/// Writes `bytes` to the output `path` names:
///   - "-": the standard output, `out` (its errors are checked when the program ends);
///   - a symbolic link: written through; the file it points to is replaced as a
///     regular file is, in that file's directory, and the link stays a link;
///   - an existing file that is not a regular file (a FIFO, a character device
///     such as /dev/null): opened and written, never replaced;
///   - a regular file or a path that does not exist yet: replaced atomically (a
///     temporary file in the same directory, renamed over it), so a reader sees
///     the old document or the whole new one, with the old file's permissions.
/// Throws tdbg::error naming `path` and the reason when it cannot be written;
/// the temporary file is removed on any failure.
void write_output(const std::string& path, std::string_view bytes, std::ostream& out);

} // namespace tdbg::cli
