// Parsing S3's XML replies: listings, errors, multipart uploads.
#include <catch2/catch.hpp>

#include <string>

#include <pugixml.hpp>

#include "tdbg/storage/detail/s3_xml.hpp"

using namespace tdbg::detail;

TEST_CASE("ListObjectsV2 replies: keys, entities, truncation and continuation token") {
    // shaped like AWS's documented reply, with the namespace and an entity
    const std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name><Prefix>run/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents><Key>run/it&#x27;s &amp; &lt;x&gt;</Key><Size>3</Size></Contents>
  <Contents><Key>run/b</Key><Size>4</Size></Contents>
</ListBucketResult>)";
    const auto page = parse_list_objects_v2(xml, "list");
    REQUIRE(page.keys.size() == 2);
    CHECK(page.keys[0] == "run/it's & <x>");
    CHECK(page.keys[1] == "run/b");
    CHECK(page.truncated);
    CHECK(page.next_continuation_token == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");

    const auto last = parse_list_objects_v2(
        "<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>", "list");
    CHECK(last.keys.empty());
    CHECK_FALSE(last.truncated);
}

TEST_CASE("url-encoded listings are decoded, '+' included") {
    const std::string xml = "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
                            "<Contents><Key>run/a+b%2Bc%3D%C3%BC%0A</Key></Contents></ListBucketResult>";
    const auto page = parse_list_objects_v2(xml, "list");
    REQUIRE(page.keys.size() == 1);
    CHECK(page.keys[0] == "run/a b+c=\xc3\xbc\n");
    CHECK_THROWS_AS(parse_list_objects_v2("<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>%ZZ</Key>"
                                          "</Contents></ListBucketResult>",
                                          "list"),
                    tdbg::storage_error);
}

TEST_CASE("malformed or unexpected XML is a storage_error that says where") {
    CHECK_THROWS_WITH(parse_list_objects_v2("<ListBucketResult><Contents>", "list s3://b/p"),
                      Catch::Contains("list s3://b/p") && Catch::Contains("malformed XML"));
    CHECK_THROWS_WITH(parse_list_objects_v2("<Error><Code>X</Code></Error>", "list"), Catch::Contains("found <Error>"));
    CHECK_THROWS_AS(parse_list_objects_v2("<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>", "l"),
                    tdbg::storage_error);
    CHECK_THROWS_AS(parse_upload_id("<InitiateMultipartUploadResult></InitiateMultipartUploadResult>", "u"),
                    tdbg::storage_error);
}

TEST_CASE("error replies give code, message and request id") {
    const auto err = parse_error_reply(R"(<?xml version='1.0' encoding='UTF-8'?>
<Error><Code>NoSuchKey</Code><Message>The key &#x27;a&#x27; does not exist.</Message><RequestId>tx123</RequestId></Error>)");
    REQUIRE(err.has_value());
    CHECK(err->code == "NoSuchKey");
    CHECK(err->message == "The key 'a' does not exist.");
    CHECK(err->request_id == "tx123");
    CHECK_FALSE(parse_error_reply("").has_value());
    CHECK_FALSE(parse_error_reply("not xml at all").has_value());
    CHECK_FALSE(parse_error_reply("<ListBucketResult/>").has_value());
}

TEST_CASE("multipart: upload id, and a completion body that round-trips through a parser") {
    CHECK(parse_upload_id("<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>VXBsb2FkIElE"
                          "</UploadId></InitiateMultipartUploadResult>",
                          "u") == "VXBsb2FkIElE");
    const std::vector<std::string> etags{"\"a54357aff0632cce46d942af68356b38\"", "\"0c78aef8<&>'\""};
    const std::string body = complete_multipart_body(etags);
    pugi::xml_document doc;
    REQUIRE(doc.load_string(body.c_str()));
    std::vector<std::pair<std::string, std::string>> parts;
    for (auto part : doc.child("CompleteMultipartUpload").children("Part")) {
        parts.emplace_back(part.child_value("PartNumber"), part.child_value("ETag"));
    }
    REQUIRE(parts.size() == 2);
    CHECK(parts[0] == std::make_pair(std::string("1"), etags[0]));
    CHECK(parts[1] == std::make_pair(std::string("2"), etags[1]));
    CHECK(tdbg::detail::markup_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
}
