// A consumer of tdbg through add_subdirectory: stores a tensor's bytes and reads them back.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <tdbg/core/tensor_value.hpp>
#include <tdbg/storage/local_storage.hpp>
#if __has_include(<tdbg/tdbg.hpp>)
#include <tdbg/tdbg.hpp>
#endif

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <scratch directory>\n", argv[0]);
        return 2;
    }
    const std::filesystem::path root(argv[1]);
    std::filesystem::remove_all(root);

    const tdbg::tensor_value written(std::vector<float>{1.5F, -2.0F, 3.25F}, {3});
    const tdbg::local_storage storage(root);
    storage.put("values/weights.bin", written.bytes());
    const auto read = tdbg::tensor_value::from_bytes(tdbg::dtype::float32, {3}, storage.read("values/weights.bin"));
    const auto values = read.as<float>();
    const bool same = read.size() == 3 && values(0) == 1.5F && values(1) == -2.0F && values(2) == 3.25F;
    std::filesystem::remove_all(root);
    if (!same) {
        std::fprintf(stderr, "read back different values than were written\n");
        return 1;
    }
    std::puts("tdbg consumer: wrote and read back 3 float32 values");
    return 0;
}
