#pragma once
// The report as a real browser draws it: headless Chromium ($TDBG_CHROMIUM, else
// chromium on PATH) takes a screenshot, Python's PIL counts its colours.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "report_html.hpp"
#include "support.hpp"

namespace tdbg::test {

namespace fs = std::filesystem;

// The browser: $TDBG_CHROMIUM, else chromium (or chromium-browser) on PATH.
inline std::optional<fs::path> find_chromium() {
    if (const char* env = std::getenv("TDBG_CHROMIUM"); env != nullptr && *env != '\0') {
        return fs::path(env);
    }
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
    std::string d;
    while (std::getline(dirs, d, ':')) {
        for (const char* name : {"chromium", "chromium-browser"}) {
            const fs::path candidate = fs::path(d.empty() ? "." : d) / name;
            if (::access(candidate.c_str(), X_OK) == 0) {
                return candidate;
            }
        }
    }
    return std::nullopt;
}

inline bool chromium_required() {
    const char* env = std::getenv("TDBG_REQUIRE_CHROMIUM");
    return env != nullptr && std::string(env) == "1";
}

// How many pixels of the PNG are within 10 per channel of each colour (PIL counts
// the distinct colours in C; Python only walks that list).
inline std::vector<long> count_colours(const fs::path& png, const std::vector<tdbg::cli::report::rgb>& colours,
                                       long expected_width = 1200, long expected_height = 3000) {
    const char* script = R"py(
import sys
try:
    from PIL import Image
except ImportError:
    print("no PIL: install python3-pil"); sys.exit(3)
image = Image.open(sys.argv[1]).convert("RGB")
targets = [tuple(int(h[i:i + 2], 16) for i in (1, 3, 5)) for h in sys.argv[2:]]
counts = [0] * len(targets)
for n, pixel in image.getcolors(image.size[0] * image.size[1]):
    for k, t in enumerate(targets):
        if all(abs(a - b) <= 10 for a, b in zip(pixel, t)):
            counts[k] += n
print(image.size[0], image.size[1], *counts)
)py";
    std::string command = shell_quote(TDBG_PYTHON3) + " -c " + shell_quote(script) + " " + shell_quote(png.string());
    for (const auto& c : colours) {
        command += " " + shell_quote(c.hex());
    }
    const auto r = run_shell(command);
    INFO(r.out << r.err);
    REQUIRE(r.status == 0); // python3 with PIL (Debian: python3-pil) decodes the screenshot
    std::istringstream in(r.out);
    long width = 0, height = 0;
    in >> width >> height;
    CHECK(width == expected_width);
    CHECK(height == expected_height);
    std::vector<long> counts(colours.size(), -1);
    for (auto& n : counts) {
        in >> n;
    }
    return counts;
}

// A screenshot of `page` as a window `width` x `height` draws it, into `png`, with a
// fresh profile in `profile` and nothing fetched; it runs as root in CI, hence --no-sandbox.
inline command_result screenshot(const fs::path& chromium, const fs::path& page, const fs::path& png,
                                 const fs::path& profile, int width, int height) {
    fs::remove_all(profile);
    fs::create_directories(profile);
    return run_shell("timeout 60 " + shell_quote(chromium.string()) +
                     " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                     " --disable-background-networking --disable-component-update --disable-sync --user-data-dir=" +
                     shell_quote(profile.string()) + " --window-size=" + std::to_string(width) + "," +
                     std::to_string(height) + " --screenshot=" + shell_quote(png.string()) + " " +
                     shell_quote("file://" + fs::absolute(page).string()));
}

} // namespace tdbg::test
