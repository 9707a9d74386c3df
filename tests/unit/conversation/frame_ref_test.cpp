// Unit tests of conversation/frame_ref.hpp: an oversize frame's reference form.
#include <sluice/conversation/frame_ref.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace {

using namespace sluice;
namespace json = boost::json;

FramePtr tool_result(std::size_t bytes) {
    std::string body;
    for (std::size_t i = 0; body.size() < bytes; ++i) {
        body += "line " + std::to_string(i) + " é\n"; // multi-byte: cuts land on boundaries
    }
    body.resize(bytes);
    json::object row{
        {"type", "user"},
        {"message",
         json::object{
             {"role", "user"},
             {"content",
              json::array{json::object{
                  {"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", body}}}}}}};
    return Frame::from_row(std::move(row));
}

TEST(FrameRef, KeepsAFrameUnderTheLimitAsItIs) {
    const auto f = tool_result(FRAME_INLINE_MAX_BYTES / 2); // its newlines weigh two on the wire
    ASSERT_LE(f->wire_bytes(), FRAME_INLINE_MAX_BYTES);
    EXPECT_EQ(held_form(f).get(), f.get());
    EXPECT_FALSE(is_reference_form(*f));
}

TEST(FrameRef, CutsTheLargeBlocksOfAnOversizeFrameAndSaysWhatWasCut) {
    const auto f = tool_result(3U << 20U);
    const auto held = held_form(f);
    ASSERT_NE(held.get(), f.get());
    EXPECT_TRUE(is_reference_form(*held));
    EXPECT_LT(held->wire_bytes(), 16U * 1024U); // the window counts this form
    EXPECT_EQ(held->type(), "user");
    EXPECT_EQ(held->facts().role, f->facts().role);
    const auto& ref = held->row().at("sluice_ref").as_object();
    EXPECT_EQ(ref.at("bytes").to_number<std::size_t>(), f->wire_bytes());
    EXPECT_EQ(ref.at("sha256").as_string(), sha256_hex(f->json()));
    const auto& block = ref.at("blocks").at(0).as_object();
    EXPECT_EQ(block.at("path").as_string(), "/message/content/0/content");
    EXPECT_EQ(block.at("bytes").to_number<std::size_t>(), 3U << 20U);
    const std::string whole(f->row().at("message").at("content").at(0).at("content").as_string());
    EXPECT_EQ(block.at("sha256").as_string(), sha256_hex(whole));
    const std::string cut(held->row().at("message").at("content").at(0).at("content").as_string());
    EXPECT_EQ(cut.substr(0, 100), whole.substr(0, 100));                       // head
    EXPECT_EQ(cut.substr(cut.size() - 100), whole.substr(whole.size() - 100)); // tail
    EXPECT_NE(cut.find("3145728 bytes"), std::string::npos);
    EXPECT_EQ(held_form(held).get(), held.get()); // a reference form stays as it is
}

TEST(FrameRef, HashesLikeSha256) {
    EXPECT_EQ(
        sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

} // namespace
