// Hostile names on a terminal (docs/reliability.md, "Hostile names"): a worker named to set
// the terminal's title, a tensor named to erase the line above, a name holding U+202E (which
// shows the text after it reversed), and a rule that cannot evaluate a step of a damaged run,
// whose error quotes those names. Every command's output, on stdout and stderr, holds none of
// them raw: each text goes through terminal_safe, the one escaping function, and shows the
// escapes instead.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/hook/hook.hpp"

namespace fs = std::filesystem;
using tdbg::test::shell_quote;

namespace {

const std::string title_worker = "wk\x1b]0;title\x07";         // OSC 0: sets the window title
const std::string erasing_tensor = "t\x1b[1A\x1b[2K" "fake";     // cursor up, erase the line
const std::string reversed_tensor = "rtl\xe2\x80\xae" "gnp.exe"; // U+202E: "rtl" then "exe.png"

// Two steps of the two hostile tensors (the first all zeros, the second `scale` times 1, 2, 3).
void write_escaping_run(const fs::path& run, float scale) {
    tdbg::hook_options o;
    o.out_dir = run.string();
    o.worker = title_worker;
    o.include_workers = tdbg::workers_to_save::all; // so that a worker not named worker_0 saves
    o.save_all = true;
    o.save_config = tdbg::save_config(tdbg::save_config_mode{1, {}, 0, std::nullopt});
    tdbg::hook h(o);
    for (int step = 0; step < 2; ++step) {
        h.begin_step();
        h.save_tensor(erasing_tensor, tdbg::tensor_value(std::vector<float>{0.0F, 0.0F}));
        h.save_tensor(reversed_tensor, tdbg::tensor_value(std::vector<float>{scale, 2 * scale, 3 * scale}));
    }
    h.close();
}

struct printed_output {
    std::string command;
    int status = 0;
    std::string text; // stdout and stderr
};

printed_output run_tdbg_cli(const std::vector<std::string>& args) {
    std::string command = shell_quote(TDBG_CLI_PATH);
    for (const auto& a : args) {
        command += " " + shell_quote(a);
    }
    const auto r = tdbg::test::run_shell(command);
    return {args.front() + (args.size() > 2 ? " " + args[2] : ""), r.status, r.out + r.err};
}

} // namespace

TEST_CASE("hostile names: no command prints a raw escape sequence or bidirectional control") {
    tdbg::test::temp_dir dir("terminal_escapes");
    const fs::path a = dir.path() / "a";
    const fs::path b = dir.path() / "b";
    const fs::path damaged = dir.path() / "damaged";
    write_escaping_run(a, 1.0F);
    write_escaping_run(b, 2.0F);
    write_escaping_run(damaged, 1.0F);
    // Step 1's event file cut short: the rules cannot read that step, and say so naming the file.
    const fs::path cut = damaged / tdbg::format::event_file_key(1, title_worker);
    REQUIRE(fs::exists(cut));
    fs::resize_file(cut, fs::file_size(cut) / 2);

    const std::vector<std::string> all_zero = {"--rule", "AllZero", "--param", "tensor_regex=.*"};
    const auto with_args = [](std::vector<std::string> args, const std::vector<std::string>& more) {
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    std::vector<printed_output> outputs;
    outputs.push_back(run_tdbg_cli({"ls", a.string()}));
    outputs.push_back(run_tdbg_cli({"show", a.string(), "."}));
    outputs.push_back(run_tdbg_cli({"show", a.string(), ".", "--reductions"}));
    outputs.push_back(run_tdbg_cli({"show", damaged.string(), "."}));
    outputs.push_back(run_tdbg_cli(with_args({"rules", a.string()}, all_zero)));
    outputs.push_back(run_tdbg_cli(with_args({"rules", damaged.string()}, all_zero)));
    outputs.push_back(run_tdbg_cli({"diff", a.string(), b.string()}));
    outputs.push_back(run_tdbg_cli({"diff", a.string(), b.string(), "--json"}));
    outputs.push_back(run_tdbg_cli({"dump", a.string()}));
    outputs.push_back(run_tdbg_cli({"dump", damaged.string()}));
    outputs.push_back(run_tdbg_cli(with_args({"report", damaged.string(), "-o", (dir.path() / "page.html").string()}, all_zero)));
    outputs.push_back(run_tdbg_cli({"report", a.string(), b.string(), "-o", (dir.path() / "two.html").string()}));

    for (const printed_output& p : outputs) {
        INFO("tdbg " << p.command << ": exit " << p.status << "\n" << p.text);
        CHECK(p.status >= 0);
        CHECK(p.status <= 2);
        CHECK(p.text.find('\x1b') == std::string::npos);                 // ESC
        CHECK(p.text.find('\x07') == std::string::npos);                 // BEL, which ends the title
        CHECK(p.text.find("\xe2\x80\xae") == std::string::npos);         // U+202E
        CHECK(p.text.find("\xc2\x9b") == std::string::npos);             // U+009B, a one-character CSI
    }
    // The names are there, escaped.
    const std::string& ls = outputs[0].text;
    CHECK(ls.find("wk\\x1b]0;title\\x07") != std::string::npos);
    CHECK(ls.find("t\\x1b[1A\\x1b[2Kfake") != std::string::npos);
    CHECK(ls.find("rtl\\xe2\\x80\\xaegnp.exe") != std::string::npos);
    CHECK(outputs[1].text.find("rtl\\xe2\\x80\\xaegnp.exe  step 1 (GLOBAL step 1)") != std::string::npos);
    CHECK(outputs[4].text.find("t\\x1b[1A\\x1b[2Kfake") != std::string::npos); // AllZero found the zeros
    CHECK(outputs[6].text.find("tensor rtl\\xe2\\x80\\xaegnp.exe") != std::string::npos);
    // The errors that quote the damaged file name its worker escaped; the report's warning too.
    CHECK(outputs[3].text.find("_wk\\x1b]0;title\\x07.tfevents") != std::string::npos);
    CHECK(outputs[5].text.find("_wk\\x1b]0;title\\x07.tfevents") != std::string::npos);
    const std::string& report = outputs[10].text;
    CHECK(report.find("tdbg report: warning: rule AllZero could not be evaluated: ") != std::string::npos);
    CHECK(report.find("_wk\\x1b]0;title\\x07.tfevents") != std::string::npos);
}
