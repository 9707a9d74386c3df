// Unit tests of hub/wire.hpp: byte-exact payloads, SSE framing, WebSocket messages, error bodies.
#include <sluice/conversation/frame.hpp>
#include <sluice/hub/wire.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::hub::wire {
namespace {

FramePtr frame(std::string_view json) {
    auto f = Frame::parse(json);
    EXPECT_TRUE(f.has_value());
    return *f;
}

Page two_turn_page() {
    Page page;
    page.turns.push_back(
        {3, {frame(R"({"type":"user","n":3})"), frame(R"({"type":"assistant","n":4})")}});
    page.turns.push_back({5, {frame(R"({"type":"user","n":5})")}});
    page.cursor = 3;
    return page;
}

TEST(Wire, NamesEveryEventKind) {
    EXPECT_STREQ(event_name(OutEvent::Kind::connected), "connected");
    EXPECT_STREQ(event_name(OutEvent::Kind::resumed), "resumed");
    EXPECT_STREQ(event_name(OutEvent::Kind::frame), "frame");
    EXPECT_STREQ(event_name(OutEvent::Kind::preview), "preview");
    EXPECT_STREQ(event_name(OutEvent::Kind::gap), "gap");
    EXPECT_STREQ(event_name(OutEvent::Kind::turn), "turn");
}

TEST(Wire, EncodesConnectedWithTheWindowPage) {
    const SeatHead head{"s-1", "e-\"x\"", 5, true, 7};
    EXPECT_EQ(
        connected_json(head, two_turn_page(), 6),
        R"({"seat":"s-1","epoch":"e-\"x\"","seq":5,"recovered":false,"state":"running","turn":7,)"
        R"("window":{"first":3,"frames":[{"type":"user","n":3},{"type":"assistant","n":4},)"
        R"({"type":"user","n":5}]},"cursor":3})");
}

TEST(Wire, EncodesConnectedForAnEmptyWindow) {
    const SeatHead head{"s-1", "e-1", -1, false, 0};
    EXPECT_EQ(
        connected_json(head, Page{}, 0),
        R"({"seat":"s-1","epoch":"e-1","seq":-1,"recovered":false,"state":"idle","turn":0,)"
        R"("window":{"first":0,"frames":[]},"cursor":null})");
}

TEST(Wire, EncodesResumed) {
    EXPECT_EQ(
        resumed_json(SeatHead{"s-1", "e-1", 41, false, 2}),
        R"({"seat":"s-1","epoch":"e-1","seq":41,"recovered":true,"state":"idle"})");
}

TEST(Wire, ConnectedAndResumedCarryPendingPermissionPrompts) {
    const std::string pending = R"([{"type":"system","subtype":"permission_request"}])";
    const SeatHead head{"s-1", "e-1", -1, true, 1, pending};
    EXPECT_EQ(
        connected_json(head, Page{}, 0),
        R"({"seat":"s-1","epoch":"e-1","seq":-1,"recovered":false,"state":"running","turn":1,)"
        R"("window":{"first":0,"frames":[]},"cursor":null,)"
        R"("permissions":[{"type":"system","subtype":"permission_request"}]})");
    EXPECT_EQ(
        resumed_json(head),
        R"({"seat":"s-1","epoch":"e-1","seq":-1,"recovered":true,"state":"running",)"
        R"("permissions":[{"type":"system","subtype":"permission_request"}]})");
    const SeatHead none{"s-1", "e-1", -1, true, 1, "[]"};
    EXPECT_EQ(resumed_json(none).find("permissions"), std::string::npos);
}

TEST(Wire, AHeadWaitingOnThePersonSaysWaitingRunningOrNot) {
    const std::string pending = R"([{"type":"system","subtype":"permission_request"}])";
    // A hosted seat's prompt (a turn runs) and a terminal session's hooked one (none runs here).
    for (const bool running : {true, false}) {
        const SeatHead head{"s-1", "e-1", 3, running, 1, pending, true};
        EXPECT_NE(connected_json(head, Page{}, 4).find(R"("state":"waiting")"), std::string::npos);
        EXPECT_NE(resumed_json(head).find(R"("state":"waiting")"), std::string::npos);
    }
}

TEST(Wire, EncodesAHistoryPage) {
    EXPECT_EQ(
        page_json(two_turn_page(), 6),
        R"({"turns":[{"first":3,"frames":[{"type":"user","n":3},{"type":"assistant","n":4}]},)"
        R"({"first":5,"frames":[{"type":"user","n":5}]}],"cursor":3,"end":6})");
    EXPECT_EQ(page_json(Page{}, 0), R"({"turns":[],"cursor":null,"end":0})");
}

TEST(Wire, EncodesEveryPreviewKind) {
    struct Row {
        StreamEvent ev;
        std::string want;
    };

    const std::vector<Row> rows{
        {llm::Text{"hi \"you\"\n"}, R"({"kind":"text","delta":"hi \"you\"\n"})"},
        {llm::Thinking{"hm"}, R"({"kind":"thinking","delta":"hm"})"},
        {llm::ToolUseDelta{"t1", R"({"a":)"},
         R"({"kind":"tool_use_delta","tool_id":"t1","delta":"{\"a\":"})"},
        {llm::ToolResultDelta{"t2", "out"},
         R"({"kind":"tool_result_delta","tool_id":"t2","delta":"out"})"},
    };
    for (const auto& r : rows) {
        EXPECT_EQ(preview_json(r.ev), r.want);
    }
}

TEST(Wire, EncodesGapAndTurnState) {
    EXPECT_EQ(gap_json(12345), R"({"dropped_bytes":12345})");
    EXPECT_EQ(turn_json(3, "started"), R"({"turn":3,"state":"started"})");
    EXPECT_EQ(
        turn_json(3, "failed", "disk full"), R"({"turn":3,"state":"failed","error":"disk full"})");
}

TEST(Wire, EncodesErrorBodies) {
    EXPECT_EQ(
        error_body("bad_request", "'name' is over 200 bytes"),
        R"({"error":{"code":"bad_request","message":"'name' is over 200 bytes"}})");
    EXPECT_EQ(
        error_body(make_error_code(errc::overloaded), "too many seats (1000)"),
        R"~({"error":{"code":"overloaded","message":"too many seats (1000)"}})~");
    EXPECT_EQ(error_code_name(make_error_code(errc::not_found)), "not_found");
    EXPECT_EQ(error_code_name(make_error_code(boost::system::errc::io_error)), "internal");
}

TEST(Wire, FramesSseEventsAndComments) {
    EXPECT_EQ(
        sse_event("gap", "", R"({"dropped_bytes":1})"),
        "event: gap\ndata: {\"dropped_bytes\":1}\n\n");
    EXPECT_EQ(sse_event("frame", "e:3", "{}"), "id: e:3\nevent: frame\ndata: {}\n\n");
    EXPECT_EQ(sse_comment("behind the window"), ": behind the window\n\n");
    EXPECT_EQ(sse_comment("a\nb"), ": a\n: b\n\n");
    EXPECT_EQ(SSE_HEARTBEAT, ": heartbeat\n\n");
}

TEST(Wire, EncodesAFrameAsSseWithoutCopyingTheRow) {
    OutEvent ev;
    ev.kind = OutEvent::Kind::frame;
    ev.id = "e-1:7";
    ev.seq = 7;
    ev.frame = frame(R"({"type":"user"})");
    const auto p = sse_pieces(ev);
    EXPECT_EQ(p.head, "id: e-1:7\nevent: frame\ndata: {\"seq\":7,\"row\":");
    EXPECT_EQ(p.body.data(), ev.frame->json().data()); // a view of the shared row
    EXPECT_EQ(p.tail, "}\n\n");
    EXPECT_EQ(
        sse_text(ev), "id: e-1:7\nevent: frame\ndata: {\"seq\":7,\"row\":{\"type\":\"user\"}}\n\n");
}

TEST(Wire, EncodesASharedPageAsSseWithoutCopyingIt) {
    OutEvent ev;
    ev.kind = OutEvent::Kind::connected;
    ev.id = "e-1:-1";
    ev.shared = std::make_shared<const std::string>(R"({"seat":"s"})");
    const auto p = sse_pieces(ev);
    EXPECT_EQ(p.body.data(), ev.shared->data());
    EXPECT_EQ(sse_text(ev), "id: e-1:-1\nevent: connected\ndata: {\"seat\":\"s\"}\n\n");
    OutEvent gap;
    gap.kind = OutEvent::Kind::gap;
    gap.data = gap_json(4);
    EXPECT_EQ(sse_text(gap), "event: gap\ndata: {\"dropped_bytes\":4}\n\n");
    EXPECT_TRUE(sse_pieces(gap).body.empty());
}

TEST(Wire, EncodesWebSocketMessages) {
    OutEvent ev;
    ev.kind = OutEvent::Kind::frame;
    ev.id = "e-1:7";
    ev.seq = 7;
    ev.frame = frame(R"({"type":"user"})");
    EXPECT_EQ(
        ws_message(ev), R"({"event":"frame","id":"e-1:7","data":{"seq":7,"row":{"type":"user"}}})");
    OutEvent turn;
    turn.kind = OutEvent::Kind::turn;
    turn.data = turn_json(1, "ended");
    EXPECT_EQ(ws_message(turn), R"({"event":"turn","id":null,"data":{"turn":1,"state":"ended"}})");
    EXPECT_EQ(
        ws_reply("sent", R"({"turn":2,"queued":false})"),
        R"({"event":"sent","id":null,"data":{"turn":2,"queued":false}})");
    EXPECT_EQ(
        ws_error("bad_request", "unknown op"),
        R"({"event":"error","id":null,"data":{"error":{"code":"bad_request",)"
        R"("message":"unknown op"}}})");
}

} // namespace

TEST(Wire, WebSocketPiecesGatherTheSharedPageIntoTheSameMessage) {
    OutEvent ev;
    ev.kind = OutEvent::Kind::connected;
    ev.id = "e:3";
    ev.shared = std::make_shared<const std::string>(R"({"window":{}})");
    const auto p = ws_pieces(ev);
    EXPECT_EQ(p.body.data(), ev.shared->data()); // a view of the shared page, not a copy
    EXPECT_EQ(
        p.head + std::string(p.body) + std::string(p.tail),
        R"({"event":"connected","id":"e:3","data":{"window":{}}})");
    EXPECT_EQ(ws_message(ev), p.head + std::string(p.body) + std::string(p.tail));
    const auto r = ws_reply_pieces("history", *ev.shared);
    EXPECT_EQ(r.head + std::string(r.body) + std::string(r.tail), ws_reply("history", *ev.shared));
}

} // namespace sluice::hub::wire
