#pragma once
/// \file
/// Reading a file a person or a platform hands to tdbg as configuration: a hook or TensorBoard
/// configuration, a checkpoint configuration and its training state file (metadata.json), a
/// rule configuration. Such a file may be anything a path can name, so it is opened without
/// blocking and looked at before a byte is read: a FIFO, a device or a directory is refused
/// (reading a FIFO would hang the training loop for good), and so is a file over the limit,
/// before it is read into memory.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "tdbg/config.hpp"

namespace tdbg {

/// The most a configuration file may hold.
inline constexpr std::uint64_t max_config_file_bytes = std::uint64_t{16} << 20U;

/// The bytes of `file`, `what` naming it in messages ("hook configuration"). A config_error
/// that names the file and says why when it does not exist, is not a regular file ("a FIFO,
/// not a regular file"), is larger than `max_bytes`, or cannot be read.
[[nodiscard]] TDBG_DECL std::string read_config_file(const std::filesystem::path& file, std::string_view what,
                                                     std::uint64_t max_bytes = max_config_file_bytes);

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/core/impl/config_file.ipp"
#endif
