#pragma once
/// \file
/// Definitions of tdbg/hook/detail/tensorboard_export.hpp.

#include <string>
#include <string_view>

#include "tdbg/hook/detail/tensorboard_export.hpp"
#include "tdbg/storage/open.hpp"

namespace tdbg::detail {

TDBG_DECL tensorboard_put_function tensorboard_target(const hook_options& options, const any_storage& run) {
    const std::string dir = options.tensorboard_dir.empty() ? std::string("tensorboard") : options.tensorboard_dir;
    if (!dir.empty() && dir.front() == '/') {
        const any_storage local = open_storage(dir); // a local directory: the path is absolute
        return [local](const std::string& key, const std::string& bytes) { local.put(key, bytes); };
    }
    std::string prefix = dir;
    while (!prefix.empty() && prefix.back() == '/') {
        prefix.pop_back();
    }
    validate_key(prefix);
    return [run, prefix](const std::string& key, const std::string& bytes) { run.put(prefix + "/" + key, bytes); };
}

TDBG_DECL std::string clean_tensorboard_tag(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '/' || c == '.' || u >= 0x80;
        out.push_back(ok ? c : '_');
    }
    const auto first = out.find_first_not_of('/');
    return first == std::string::npos ? std::string() : out.substr(first);
}

} // namespace tdbg::detail
