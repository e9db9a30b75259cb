#pragma once
// Text tables for a person to read, shared by `tdbg ls` and `tdbg show`: rows of cells in
// columns as wide as their widest cell.

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace tdbg::cli {

/// Writes `rows` to `out`, a line each: each column as wide as its widest cell (in bytes),
/// two spaces apart; the columns `left` marks aligned left, the others right. A line ends at
/// its last character other than a space.
inline void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                        const std::vector<bool>& left) {
    std::vector<std::size_t> widths(left.size(), 0);
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < row.size(); ++c) {
            widths[c] = std::max(widths[c], row[c].size());
        }
    }
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            const std::string padding(widths[c] - row[c].size(), ' ');
            line += (c == 0 ? "" : "  ") + (left[c] ? row[c] + padding : padding + row[c]);
        }
        line.erase(line.find_last_not_of(' ') + 1);
        out << line << "\n";
    }
}

} // namespace tdbg::cli
