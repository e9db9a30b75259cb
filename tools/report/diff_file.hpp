#pragma once
// Reading `tdbg diff --json` output for `tdbg report --diff FILE`: the file read whole (a pipe
// such as `<(tdbg diff A B --json)` too), the document read by tdbg/diff/document.hpp, every
// error naming the option and the file.

#include <array>
#include <cerrno>
#include <cstddef>
#include <fstream>
#include <ios>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "report/model.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/diff/document.hpp"

namespace tdbg::cli::report {

/// The diff in `file`, `tdbg diff --json` output (a file, or a pipe such as `<(tdbg diff A B --json)`).
inline diff_summary read_diff(const std::string& file) {
    constexpr std::size_t limit = std::size_t{64} << 20U;
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::error_code ec(errno, std::generic_category());
        throw tdbg::error(fmt::format("--diff {}: cannot read it: {}", file, ec.message()));
    }
    std::string text;
    std::array<char, 65536> buffer{};
    while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
        text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
        if (text.size() > limit) {
            throw tdbg::error(fmt::format("--diff {}: larger than 64 MiB, not tdbg diff output", file));
        }
    }
    if (in.bad()) {
        throw tdbg::error(fmt::format("--diff {}: cannot read it", file));
    }
    diff_summary d;
    try {
        static_cast<tdbg::diff_document&>(d) = tdbg::read_diff_document(text, file);
    } catch (const tdbg::format_error& e) {
        throw tdbg::error(fmt::format("--diff {}", e.what()));
    }
    d.source = file;
    return d;
}

} // namespace tdbg::cli::report
