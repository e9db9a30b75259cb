// local_storage reads strictly: a run that cannot be read is never taken for a run with less
// in it. Keys that are not regular files, links that leave the run, and directories that
// cannot be listed are storage_errors naming the path; links inside the run are followed.

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "storage/unprivileged.hpp"
#include "support.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using tdbg::local_storage;
using tdbg::storage_error;

TEST_CASE("local_storage: a key that is a FIFO, a socket or a device is an error naming it, and never blocks") {
    tdbg::test::temp_dir dir("strict_special");
    const local_storage s(dir.path());
    s.put("index/000000000/000000000000_worker_0.json", "{}");
    const std::string key = "index/000000000/000000000001_worker_0.json";
    const fs::path fifo = dir.path() / key;
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);

    // Listed: an error naming it (it used to be left out, and its step silently dropped).
    CHECK_THROWS_AS(s.list("index/"), storage_error);
    CHECK_THROWS_WITH(s.list("index/"), Contains(fifo.string()) && Contains("a FIFO, not a regular file"));
    // Where the listing does not reach it, it is not looked at.
    CHECK(s.list("index/", key) == std::vector<std::string>{});
    CHECK(s.list("events/").empty());

    // Read by key: refused, without waiting for a writer (the open would block) ...
    CHECK_THROWS_WITH(s.read(key), Contains(fifo.string()) && Contains("a FIFO"));
    CHECK_THROWS_WITH(s.open_read(key), Contains(fifo.string()) && Contains("a FIFO"));
    CHECK_THROWS_WITH(s.read_range(key, 0, 1), Contains(fifo.string()) && Contains("a FIFO"));
    CHECK_FALSE(s.exists(key));
    {
        // ... or for data from a writer that holds it open (a read would block).
        const int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
        REQUIRE(writer >= 0);
        CHECK_THROWS_WITH(s.read(key), Contains(fifo.string()) && Contains("a FIFO"));
        REQUIRE(::write(writer, "{}", 2) == 2);
        CHECK_THROWS_WITH(s.read(key), Contains(fifo.string()) && Contains("a FIFO"));
        ::close(writer);
    }

    // A writer's temporary file is skipped whatever it is.
    fs::remove(fifo);
    REQUIRE(::mkfifo((dir.path() / (key + ".7.0.tmp")).c_str(), 0644) == 0);
    CHECK(s.list("index/") == std::vector<std::string>{"index/000000000/000000000000_worker_0.json"});

    // A socket.
    const fs::path socket_path = dir.path() / "sock";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socket_path.native().size() < sizeof address.sun_path) {
        socket_path.native().copy(address.sun_path, socket_path.native().size());
        const int sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(sock >= 0);
        REQUIRE(::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
        CHECK_THROWS_WITH(s.list("so"), Contains(socket_path.string()) && Contains("a socket, not a regular file"));
        CHECK_THROWS_AS(s.read("sock"), storage_error);
        CHECK_THROWS_WITH(s.read("sock"), Contains(socket_path.string()));
        CHECK_FALSE(s.exists("sock"));
        ::close(sock);
    } else {
        WARN("the scratch directory's path is too long for a socket: socket checks left out");
    }

    // Devices, where this process may make them: one that fills every read (a copy of
    // /dev/zero: a read to the end would never end) and one that is empty (/dev/null).
    const fs::path zero = dir.path() / "dev" / "zero";
    const fs::path null = dir.path() / "dev" / "null";
    fs::create_directories(zero.parent_path());
    if (::mknod(zero.c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0 &&
        ::mknod(null.c_str(), S_IFCHR | 0644, makedev(1, 3)) == 0) {
        CHECK_THROWS_WITH(s.list("dev/"), Contains("a character device, not a regular file"));
        // (On a file system mounted nodev the open itself is refused: an error all the same.)
        CHECK_THROWS_AS(s.read("dev/zero"), storage_error);
        CHECK_THROWS_WITH(s.read("dev/zero"), Contains(zero.string()));
        CHECK_THROWS_WITH(s.read("dev/null"), Contains(null.string()));
        CHECK_THROWS_WITH(s.open_read("dev/zero"), Contains(zero.string()));
        CHECK_FALSE(s.exists("dev/null"));
    } else {
        WARN("cannot make device nodes here (no CAP_MKNOD): device checks left out");
    }
}

TEST_CASE("local_storage: links that stay inside the run are followed, links that leave it are refused naming the link and where it leads") {
    tdbg::test::temp_dir top("strict_links");
    const fs::path run = fs::absolute(top.path() / "run");
    const fs::path outside = fs::absolute(top.path() / "outside");
    const local_storage s(run);
    s.put("data/events/e.tfevents", "0123456789");
    s.put("data/index/000000000/000000000000_worker_0.json", "{\"in\": 1}");
    s.put("data/c.json", "collections");
    const local_storage out(outside);
    out.put("events/e.tfevents", "outside!!!");
    out.put("index/000000000/000000000001_worker_0.json", "{\"out\": 1}");

    // Inside: a relative link to a directory, an absolute one (which openat2 refuses by
    // itself), a link to a file, and a link that leaves and comes back in.
    fs::create_directory_symlink("data/events", run / "events");
    fs::create_directory_symlink(run / "data" / "index", run / "index");
    fs::create_directories(run / "collections" / "000000000");
    fs::create_symlink("../../data/c.json", run / "collections" / "000000000" / "worker_0_collections.json");
    fs::create_directory_symlink("../run/data", run / "round");
    CHECK(s.read("events/e.tfevents") == "0123456789");
    CHECK(s.read_range("events/e.tfevents", 2, 3) == "234");
    CHECK(s.open_read("events/e.tfevents").size() == 10);
    CHECK(s.exists("events/e.tfevents"));
    CHECK(s.list("index/") == std::vector<std::string>{"index/000000000/000000000000_worker_0.json"});
    CHECK(s.read("index/000000000/000000000000_worker_0.json") == "{\"in\": 1}");
    CHECK(s.list("collections/") == std::vector<std::string>{"collections/000000000/worker_0_collections.json"});
    CHECK(s.read("collections/000000000/worker_0_collections.json") == "collections");
    CHECK(s.read("round/events/e.tfevents") == "0123456789");
    // The run directory itself may be reached through a link.
    fs::create_directory_symlink(run, top.path() / "run_link");
    CHECK(local_storage(top.path() / "run_link").read("events/e.tfevents") == "0123456789");

    // Outside: relative and absolute links to directories, read by key.
    fs::create_directory_symlink("../outside/events", run / "out_rel");
    fs::create_directory_symlink(outside / "events", run / "out_abs");
    for (const std::string link : {"out_rel", "out_abs"}) {
        INFO(link);
        const std::string key = link + "/e.tfevents";
        const auto names_link = [&](const std::string& what) {
            INFO(what);
            CHECK(what.find((run / link).string() + ": a symbolic link to") != std::string::npos);
            CHECK(what.find("leads out of the run directory") != std::string::npos);
            CHECK(what.find((outside / "events").string()) != std::string::npos);
        };
        CHECK_THROWS_AS(s.read(key), storage_error);
        names_link(tdbg::test::error_of([&] { (void)s.read(key); }));
        names_link(tdbg::test::error_of([&] { (void)s.read_range(key, 0, 4); }));
        names_link(tdbg::test::error_of([&] { (void)s.open_read(key); }));
        names_link(tdbg::test::error_of([&] { (void)s.exists(key); }));
    }
    CHECK_THROWS_WITH(s.read("out_rel/e.tfevents"), Contains("'../outside/events'"));
    // A listed directory that leads out, and a listed file that does.
    fs::create_directories(run / "ix");
    fs::create_directory_symlink(outside / "index" / "000000000", run / "ix" / "000000000");
    CHECK_THROWS_WITH(s.list("ix/"), Contains((run / "ix" / "000000000").string()) &&
                                         Contains("leads out of the run directory"));
    fs::create_directories(run / "files");
    fs::create_symlink(outside / "index" / "000000000" / "000000000001_worker_0.json", run / "files" / "a.json");
    CHECK(s.list("files/") == std::vector<std::string>{"files/a.json"});
    CHECK_THROWS_WITH(s.read("files/a.json"),
                      Contains((run / "files" / "a.json").string()) && Contains("leads out of the run directory"));
    // A listed link that leads nowhere.
    fs::create_directories(run / "dangling");
    fs::create_symlink("missing.json", run / "dangling" / "a.json");
    CHECK_THROWS_WITH(s.list("dangling/"),
                      Contains((run / "dangling" / "a.json").string()) && Contains("'missing.json', which does not exist"));
    // Nothing outside was read or written.
    CHECK(out.read("events/e.tfevents") == "outside!!!");
}

TEST_CASE("local_storage: a file or a looping link where a directory belongs is an error naming it, a directory that does not exist holds no keys") {
    const tdbg::test::temp_dir dir("strict_listing");
    // Not there (yet): no keys, no objects.
    const local_storage absent(dir.path() / "absent");
    CHECK(absent.list("index/").empty());
    CHECK_FALSE(absent.exists("index/000000000/000000000000_worker_0.json"));
    CHECK_THROWS_AS(absent.read("collections/000000000/worker_0_collections.json"), tdbg::object_not_found);
    const fs::path run = dir.path() / "run";
    const local_storage s(run);
    s.put("collections/000000000/worker_0_collections.json", "{}");
    CHECK(s.list("index/").empty());

    // A file where a directory belongs.
    tdbg::test::write_file(run / "index", "x");
    CHECK_THROWS_WITH(s.list("index/"), Contains((run / "index").string()) && Contains("not a directory"));
    fs::remove(run / "index");

    // A directory entry that cannot be followed (a link to itself): even root cannot list it.
    s.put("index/000000000/000000000000_worker_0.json", "{}");
    fs::create_directory_symlink("000000001", run / "index" / "000000001");
    CHECK_THROWS_WITH(s.list("index/"), Contains((run / "index" / "000000001").string()) &&
                                            Contains("cannot be followed"));
    CHECK(s.list("index/000000000/") == std::vector<std::string>{"index/000000000/000000000000_worker_0.json"});
    fs::remove(run / "index" / "000000001");
}

TEST_CASE("local_storage: a directory that cannot be read is an error naming it, as a user permissions apply to") {
    const tdbg::test::unprivileged_scratch dir("strict_locked");
    if (const std::string why = dir.why_unreachable(); !why.empty()) {
        TDBG_SKIP(why << ": the permission check is left out");
    }
    const fs::path run = dir.path() / "run";
    const local_storage s(run);
    s.put("index/000000000/000000000000_worker_0.json", "{}");
    const fs::path locked = run / "index" / "000000000";
    fs::permissions(locked, fs::perms::none);
    const auto status = tdbg::test::run_unprivileged([&] {
        try {
            const auto keys = s.list("index/");
            std::fprintf(stderr, "listed %zu keys of an unreadable directory\n", keys.size());
            return 1;
        } catch (const storage_error& e) {
            return tdbg::test::permission_denied_status(e.what(), locked.string());
        }
    });
    fs::permissions(locked, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
}

TEST_CASE("local_storage: a run directory removed and written again is read anew") {
    tdbg::test::temp_dir dir("strict_renew");
    const fs::path run = dir.path() / "run";
    const local_storage s(run);
    s.put("index/000000000/000000000000_worker_0.json", "first");
    CHECK(s.read("index/000000000/000000000000_worker_0.json") == "first");
    fs::remove_all(run);
    CHECK(s.list("index/").empty());
    CHECK_FALSE(s.exists("index/000000000/000000000000_worker_0.json"));
    const local_storage again(run);
    again.put("index/000000000/000000000001_worker_0.json", "second");
    CHECK(s.list("index/") == std::vector<std::string>{"index/000000000/000000000001_worker_0.json"});
    CHECK(s.read("index/000000000/000000000001_worker_0.json") == "second");
    CHECK(s.exists("index/000000000/000000000001_worker_0.json"));
    // Replaced once more, the first read of an object finds the new directory.
    fs::remove_all(run);
    again.put("index/000000000/000000000002_worker_0.json", "third");
    CHECK(s.read("index/000000000/000000000002_worker_0.json") == "third");
}

TEST_CASE("local_storage: a file larger than max_read_bytes is refused before it is read whole, naming it") {
    tdbg::test::temp_dir dir("strict_size");
    local_storage::options opts;
    opts.max_read_bytes = 100'000;
    const local_storage s(dir.path(), opts);
    s.put("index/000000000/000000000000_worker_0.json", std::string(99'000, 'x'));
    s.put("index/000000000/000000000001_worker_0.json", std::string(300'000, 'x'));
    CHECK(s.read("index/000000000/000000000000_worker_0.json").size() == 99'000);
    CHECK_THROWS_WITH(s.read("index/000000000/000000000001_worker_0.json"),
                      Contains((dir.path() / "index/000000000/000000000001_worker_0.json").string()) &&
                          Contains("is 300000 bytes, more than the 100000"));
    // Ranges of it are still read (event files are read that way).
    CHECK(s.read_range("index/000000000/000000000001_worker_0.json", 200'000, 10) == std::string(10, 'x'));
    CHECK(local_storage::options{}.max_read_bytes == std::uint64_t{256} << 20U);
}
