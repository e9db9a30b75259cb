#pragma once
/// \file
/// smdebug's collection files ("collections/000000000/<worker>_collections.json"):
/// each collection's regexes, tensor names, reduction config and save config,
/// and the number of workers.

#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/save_config.hpp"

namespace tdbg::format {

/// smdebug's ReductionConfig as a collection file holds it.
struct collection_reduction_config {
    bool save_raw_tensor = true;
    std::vector<reduction> reductions;
    bool save_shape = false;

    friend bool operator==(const collection_reduction_config& a, const collection_reduction_config& b) {
        return a.save_raw_tensor == b.save_raw_tensor && a.reductions == b.reductions && a.save_shape == b.save_shape;
    }
    friend bool operator!=(const collection_reduction_config& a, const collection_reduction_config& b) {
        return !(a == b);
    }
};

/// One collection. `exclude_regex` is tdbg's: it is written only when not
/// empty (smdebug's reader ignores keys it does not know).
struct collection_spec {
    std::string name;
    std::vector<std::string> include_regex;
    std::vector<std::string> exclude_regex;
    std::vector<std::string> tensor_names;
    collection_reduction_config reduction_config;
    tdbg::save_config save_config;
    bool save_histogram = true;

    friend bool operator==(const collection_spec& a, const collection_spec& b) {
        return a.name == b.name && a.include_regex == b.include_regex && a.exclude_regex == b.exclude_regex &&
               a.tensor_names == b.tensor_names && a.reduction_config == b.reduction_config &&
               a.save_config == b.save_config && a.save_histogram == b.save_histogram;
    }
    friend bool operator!=(const collection_spec& a, const collection_spec& b) { return !(a == b); }
};

/// The contents of one collection file, collections in file order.
struct collections_file {
    std::vector<collection_spec> collections;
    int num_workers = 1;

    friend bool operator==(const collections_file& a, const collections_file& b) {
        return a.collections == b.collections && a.num_workers == b.num_workers;
    }
    friend bool operator!=(const collections_file& a, const collections_file& b) { return !(a == b); }
};

/// The JSON text, byte for byte as smdebug writes it (tensor names sorted, as
/// smdebug does). Throws tdbg::error for two collections with one name.
[[nodiscard]] TDBG_DECL std::string to_json(const collections_file& file);

/// Parses a collection file; throws format_error naming `file` and the key
/// (or the byte offset of a JSON syntax error). Unknown keys are ignored.
[[nodiscard]] TDBG_DECL collections_file parse_collections_file(std::string_view json, std::string_view file);

} // namespace tdbg::format

#if TDBG_HEADER_ONLY
#include "tdbg/format/impl/collections_file.ipp"
#endif
