#pragma once
/// \file
/// S3's XML replies (ListObjectsV2, errors, multipart uploads), parsed with
/// pugixml: names and messages contain entities such as `&#x27;`.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <pugixml.hpp>

#include "tdbg/core/detail/markup.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/storage/detail/s3_uri.hpp"

namespace tdbg::detail {

/// One page of a ListObjectsV2 reply.
struct s3_list_page {
    std::vector<std::string> keys; ///< full keys, decoded
    bool truncated = false;
    std::string next_continuation_token;
};

/// The fields of an S3 `<Error>` reply.
struct s3_error_reply {
    std::string code;
    std::string message;
    std::string request_id;
};

/// Parses `xml` whose root element must be `root`; throws storage_error naming `what`.
inline pugi::xml_node parse_xml_root(pugi::xml_document& doc, std::string_view xml, const char* root,
                                     const std::string& what) {
    const pugi::xml_parse_result result = doc.load_buffer(xml.data(), xml.size());
    if (!result) {
        throw storage_error(
            fmt::format("{}: malformed XML reply at byte {}: {}", what, result.offset, result.description()));
    }
    pugi::xml_node node = doc.child(root);
    if (!node) {
        const std::string found = doc.first_child() ? doc.first_child().name() : "nothing";
        throw storage_error(fmt::format("{}: expected an XML <{}> reply, found <{}>", what, root, found));
    }
    return node;
}

/// Parses a ListObjectsV2 reply; keys are url-decoded when the reply says
/// `<EncodingType>url</EncodingType>` (we ask for it: XML 1.0 cannot carry
/// every byte a key may hold).
inline s3_list_page parse_list_objects_v2(std::string_view xml, const std::string& what) {
    pugi::xml_document doc;
    const pugi::xml_node root = parse_xml_root(doc, xml, "ListBucketResult", what);
    const bool url_encoded = std::string_view(root.child_value("EncodingType")) == "url";
    s3_list_page page;
    for (pugi::xml_node contents : root.children("Contents")) {
        const pugi::xml_node key = contents.child("Key");
        if (!key) {
            throw storage_error(fmt::format("{}: a <Contents> entry without <Key> in the listing", what));
        }
        if (url_encoded) {
            auto decoded = percent_decode(key.child_value(), true);
            if (!decoded) {
                throw storage_error(fmt::format("{}: malformed url-encoded key '{}' in the listing", what,
                                                std::string(key.child_value()).substr(0, 300)));
            }
            page.keys.push_back(std::move(*decoded));
        } else {
            page.keys.emplace_back(key.child_value());
        }
    }
    const std::string_view truncated = root.child_value("IsTruncated");
    page.truncated = truncated == "true";
    page.next_continuation_token = root.child_value("NextContinuationToken");
    return page;
}

/// The `<Error>` fields, or nullopt when `xml` is not an S3 error document.
inline std::optional<s3_error_reply> parse_error_reply(std::string_view xml) {
    pugi::xml_document doc;
    if (!doc.load_buffer(xml.data(), xml.size())) {
        return std::nullopt;
    }
    const pugi::xml_node root = doc.child("Error");
    if (!root) {
        return std::nullopt;
    }
    return s3_error_reply{root.child_value("Code"), root.child_value("Message"), root.child_value("RequestId")};
}

/// The UploadId of an InitiateMultipartUpload reply.
inline std::string parse_upload_id(std::string_view xml, const std::string& what) {
    pugi::xml_document doc;
    const pugi::xml_node root = parse_xml_root(doc, xml, "InitiateMultipartUploadResult", what);
    std::string id = root.child_value("UploadId");
    if (id.empty()) {
        throw storage_error(fmt::format("{}: no UploadId in the InitiateMultipartUpload reply", what));
    }
    return id;
}

/// The CompleteMultipartUpload body for parts 1..n with these ETags.
inline std::string complete_multipart_body(const std::vector<std::string>& etags) {
    std::string out = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
    for (std::size_t i = 0; i < etags.size(); ++i) {
        out += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, markup_escape(etags[i]));
    }
    out += "</CompleteMultipartUpload>";
    return out;
}

} // namespace tdbg::detail
