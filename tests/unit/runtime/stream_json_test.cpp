// Tests of the stream-json decoder and encoders: tables, then real Claude Code captures.
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
using namespace stream_json;

// The decoded kind as a word, for tables.
std::string kind(const Decoded& d) {
    switch (d.index()) {
    case 0:
        return "ignored";
    case 1:
        return "frame";
    case 2:
        return "preview";
    case 3:
        return "stream";
    case 4:
        return "control";
    case 5:
        return "cancel";
    case 6:
        return "response";
    default:
        return "result";
    }
}

// A stream_event row around `event` (JSON text).
std::string event_row(const std::string& inner, const std::string& parent = "null") {
    return R"({"type":"stream_event","event":)" + inner + R"(,"parent_tool_use_id":)" + parent
           + "}";
}

// A content_block_delta stream_event at `index` with `delta` (JSON text).
std::string delta_row(int index, const std::string& d, const std::string& parent = "null") {
    return event_row(
        R"({"type":"content_block_delta","index":)" + std::to_string(index) + R"(,"delta":)" + d
            + "}",
        parent);
}

struct Case {
    const char* name;
    std::string line;
    std::string want;
};

TEST(StreamJsonDecoder, ClassifiesEachKindOfLine) {
    const std::vector<Case> cases = {
        {"blank", "", "ignored"},
        {"spaces and CR", "  \r", "ignored"},
        {"not JSON", "this is not json", "ignored"},
        {"a JSON array", "[1,2]", "ignored"},
        {"a JSON string", "\"row\"", "ignored"},
        {"cut JSON", R"({"type":"assistant","message":{)", "ignored"},
        {"control request",
         R"({"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool"}})",
         "control"},
        {"control response",
         R"({"type":"control_response","response":{"subtype":"success"}})",
         "response"},
        {"control response without response", R"({"type":"control_response"})", "ignored"},
        {"control cancel", R"({"type":"control_cancel_request","request_id":"r1"})", "cancel"},
        {"keep alive", R"({"type":"keep_alive"})", "ignored"},
        {"system init", R"({"type":"system","subtype":"init","session_id":"s"})", "frame"},
        {"assistant",
         R"({"type":"assistant","message":{"role":"assistant",)"
         R"("content":[{"type":"text","text":"hi"}]}})",
         "frame"},
        {"prompt echo (string)",
         R"({"type":"user","message":{"role":"user","content":"hi"}})",
         "ignored"},
        {"prompt echo (text blocks)",
         R"({"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]}})",
         "ignored"},
        {"user without message", R"({"type":"user"})", "ignored"},
        {"tool result",
         R"({"type":"user","message":{"role":"user","content":)"
         R"([{"type":"tool_result","tool_use_id":"t","content":"ok"}]}})",
         "frame"},
        {"result",
         R"({"type":"result","subtype":"success","is_error":false,"result":"4"})",
         "result"},
        {"result with trailing CR", "{\"type\":\"result\",\"subtype\":\"success\"}\r", "result"},
        {"rate limit event",
         R"({"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}})",
         "frame"},
        {"no type", R"({"foo":1})", "frame"},
        {"text delta", delta_row(0, R"({"type":"text_delta","text":"a"})"), "preview"},
        {"sub-agent delta",
         delta_row(0, R"({"type":"text_delta","text":"a"})", R"("toolu_1")"),
         "stream"},
        {"message stop", R"({"type":"stream_event","event":{"type":"message_stop"}})", "stream"},
        {"signature delta",
         delta_row(0, R"({"type":"signature_delta","signature":"x"})"),
         "stream"},
        {"event not an object", R"({"type":"stream_event","event":3})", "ignored"},
    };
    for (const auto& c : cases) {
        Decoder d;
        EXPECT_EQ(kind(d.decode(c.line)), c.want) << c.name;
    }
}

TEST(StreamJsonDecoder, PreviewsCarryTextThinkingAndTheirToolId) {
    Decoder d;
    EXPECT_EQ(
        kind(d.decode(
            R"({"type":"stream_event","event":{"type":"message_start","message":{"id":"m"}}})")),
        "stream");
    EXPECT_EQ(
        kind(
            d.decode(event_row(R"({"type":"content_block_start","index":1,"content_block":)"
                               R"({"type":"tool_use","id":"toolu_7","name":"Bash","input":{}}})"))),
        "stream");
    auto text = d.decode(delta_row(0, R"({"type":"text_delta","text":"hel"})"));
    ASSERT_TRUE(std::holds_alternative<Preview>(text));
    EXPECT_EQ(std::get<llm::Text>(std::get<Preview>(text).event).text, "hel");
    auto thinking = d.decode(delta_row(0, R"({"type":"thinking_delta","thinking":"hmm"})"));
    EXPECT_EQ(std::get<llm::Thinking>(std::get<Preview>(thinking).event).text, "hmm");
    auto input = d.decode(delta_row(1, R"({"type":"input_json_delta","partial_json":"{\"a"})"));
    const auto& delta = std::get<llm::ToolUseDelta>(std::get<Preview>(input).event);
    EXPECT_EQ(delta.tool_id, "toolu_7");
    EXPECT_EQ(delta.delta, "{\"a");
    // A new message forgets the old message's tool ids.
    (void)d.decode(
        R"({"type":"stream_event","event":{"type":"message_start","message":{"id":"m2"}}})");
    auto orphan = d.decode(delta_row(1, R"({"type":"input_json_delta","partial_json":"x"})"));
    EXPECT_EQ(std::get<llm::ToolUseDelta>(std::get<Preview>(orphan).event).tool_id, "");
}

TEST(StreamJsonDecoder, ControlRequestsNameTheirRequest) {
    Decoder d;
    auto r = d.decode(
        R"({"type":"control_request","request_id":"perm-1","request":{"subtype":"can_use_tool"}})");
    ASSERT_TRUE(std::holds_alternative<ControlRequest>(r));
    EXPECT_EQ(std::get<ControlRequest>(r).request_id, "perm-1");
    EXPECT_EQ(std::get<ControlRequest>(r).row.at("request").at("subtype"), "can_use_tool");
}

TEST(StreamJsonEncoders, WriteOneRowPerLine) {
    const auto prompt = encode_prompt("say \"hi\"\n");
    ASSERT_EQ(prompt.back(), '\n');
    EXPECT_EQ(prompt.find('\n'), prompt.size() - 1);
    const auto p = json::parse(prompt);
    EXPECT_EQ(p.at("type"), "user");
    EXPECT_EQ(p.at("message").at("content"), "say \"hi\"\n");
    EXPECT_TRUE(p.at("parent_tool_use_id").is_null());
    // Our own prompt, echoed back, is not a frame.
    Decoder d;
    EXPECT_EQ(kind(d.decode(std::string_view(prompt).substr(0, prompt.size() - 1))), "ignored");

    const auto interrupt = json::parse(encode_interrupt("sluice-interrupt-1"));
    EXPECT_EQ(interrupt.at("type"), "control_request");
    EXPECT_EQ(interrupt.at("request_id"), "sluice-interrupt-1");
    EXPECT_EQ(interrupt.at("request").at("subtype"), "interrupt");

    const auto refusal = json::parse(encode_refusal("perm-1"));
    EXPECT_EQ(refusal.at("type"), "control_response");
    EXPECT_EQ(refusal.at("response").at("subtype"), "error");
    EXPECT_EQ(refusal.at("response").at("request_id"), "perm-1");
}

TEST(StrField, ReadsStringsOnly) {
    const auto o = json::parse(R"({"s":"x","n":1,"e":""})").as_object();
    EXPECT_EQ(str_field(o, "s"), "x");
    EXPECT_EQ(str_field(o, "n"), "");
    EXPECT_EQ(str_field(o, "missing"), "");
    EXPECT_NE(find_str(o, "e"), nullptr);
    EXPECT_EQ(find_str(o, "n"), nullptr);
    EXPECT_EQ(find_str(o, "missing"), nullptr);
}

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(SLUICE_FIXTURES_DIR) + "/" + name, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> kinds_of_lines(const std::vector<std::string>& lines) {
    Decoder d;
    std::vector<std::string> out;
    for (const auto& l : lines) {
        out.push_back(kind(d.decode(l)));
    }
    return out;
}

TEST(StreamJsonDecoder, DecodesARealClaudeCodeCapture) {
    // charlieyou/claude-agent-sdk-gleam: real `claude -p --output-format stream-json` (2.1.7).
    const auto text =
        fixture("charlieyou_claude-agent-sdk-gleam/test_fixtures_golden_basic_query.ndjson");
    ASSERT_FALSE(text.empty());
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        if (!l.empty()) {
            lines.push_back(l);
        }
    }
    EXPECT_EQ(kinds_of_lines(lines), (std::vector<std::string>{"frame", "frame", "result"}));
    Decoder d;
    auto result = d.decode(lines.back());
    EXPECT_EQ(std::get<TurnResult>(result).row.at("result"), "4");
}

TEST(StreamJsonDecoder, DecodesRealCapturesWithToolUse) {
    // slopus/happy-cli: real stream-json (v1.0.x), saved as a JSON array of the rows.
    struct File {
        const char* path;
        std::vector<std::string> want;
    };

    const std::vector<File> files = {
        {"slopus_happy-cli/"
         "explore-claude-cli_v3-claude-self-exploration_toy-project-3-tool-approve_sample-error."
         "json",
         {"frame", "frame", "frame", "frame", "frame", "result"}},
        {"slopus_happy-cli/"
         "explore-claude-cli_v3-claude-self-exploration_toy-project-3-tool-approve_sample-error-"
         "edit-and-multi-edit.json",
         {"frame",
          "frame",
          "frame",
          "frame",
          "frame",
          "frame",
          "frame",
          "frame",
          "frame",
          "frame",
          "frame",
          "result"}},
    };
    for (const auto& f : files) {
        const auto rows = json::parse(fixture(f.path));
        std::vector<std::string> lines;
        for (const auto& r : rows.as_array()) {
            lines.push_back(json::serialize(r)); // one row per line, as the CLI writes them
        }
        EXPECT_EQ(kinds_of_lines(lines), f.want) << f.path;
    }
}

TEST(StreamJsonDecoder, KeepsEveryStreamEventRowWhole) {
    Decoder d;
    const auto line = delta_row(2, R"({"type":"text_delta","text":"a"})");
    auto p = d.decode(line);
    ASSERT_TRUE(std::holds_alternative<Preview>(p));
    EXPECT_EQ(json::serialize(std::get<Preview>(p).row), json::serialize(json::parse(line)));
    auto stop =
        d.decode(R"({"type":"stream_event","event":{"type":"content_block_stop","index":2}})");
    ASSERT_TRUE(std::holds_alternative<StreamRow>(stop));
    EXPECT_EQ(std::get<StreamRow>(stop).row.at("event").at("index"), 2);
}

TEST(StreamJsonPermissions, RecordsARequestAndAnswersIt) {
    // The can_use_tool request as Claude Code 2.1.328 sends it (tests/e2e/claude_test.cpp).
    const auto req = json::parse(
        R"({"type":"control_request","request_id":"r9","request":{"subtype":"can_use_tool",)"
        R"("tool_name":"Bash","input":{"command":"touch x"},"description":"Create x",)"
        R"("tool_use_id":"toolu_1"}})");
    const auto row = permission_request_row(req.as_object());
    EXPECT_EQ(row.at("type"), "system");
    EXPECT_EQ(row.at("subtype"), "permission_request");
    EXPECT_EQ(row.at("request_id"), "r9");
    EXPECT_EQ(row.at("tool_name"), "Bash");
    EXPECT_EQ(row.at("tool_use_id"), "toolu_1");
    EXPECT_EQ(row.at("input").at("command"), "touch x");
    EXPECT_EQ(row.at("title"), "Create x");
    EXPECT_TRUE(row.at("decision_reason").is_null());
    const auto& input = req.at("request").at("input");
    EXPECT_EQ(
        json::serialize(permission_response(true, "", nullptr, &input)),
        R"({"behavior":"allow","updatedInput":{"command":"touch x"}})");
    const json::value changed = json::parse(R"({"command":"true"})");
    EXPECT_EQ(
        json::serialize(permission_response(true, "", &changed, &input)),
        R"({"behavior":"allow","updatedInput":{"command":"true"}})");
    EXPECT_EQ(
        json::serialize(permission_response(false, "no", nullptr, &input)),
        R"({"behavior":"deny","message":"no"})");
    const auto line =
        encode_control_success("r9", permission_response(false, "", nullptr, nullptr));
    EXPECT_EQ(
        line,
        R"({"type":"control_response","response":{"subtype":"success","request_id":"r9",)"
        R"("response":{"behavior":"deny","message":"denied"}}})"
        "\n");
}

TEST(StreamJsonDecoder, ReadsTheAgentsAnswerToAControlRequest) {
    Decoder d;
    // Claude Code 2.1.328's answers to set_permission_mode, as it printed them.
    auto ok =
        d.decode(R"({"type":"control_response","response":{"subtype":"success","request_id":"r2",)"
                 R"("response":{"mode":"plan"}}})");
    ASSERT_TRUE(std::holds_alternative<ControlResponse>(ok));
    EXPECT_EQ(std::get<ControlResponse>(ok).request_id, "r2");
    EXPECT_EQ(std::get<ControlResponse>(ok).error, "");
    EXPECT_EQ(json::serialize(std::get<ControlResponse>(ok).response), R"({"mode":"plan"})");
    auto refused =
        d.decode(R"({"type":"control_response","response":{"subtype":"error","request_id":"r6",)"
                 R"("error":"Cannot set permission mode to bypassPermissions","error_code":)"
                 R"("bypass_not_launched"}})");
    ASSERT_TRUE(std::holds_alternative<ControlResponse>(refused));
    EXPECT_EQ(std::get<ControlResponse>(refused).request_id, "r6");
    EXPECT_EQ(
        std::get<ControlResponse>(refused).error,
        "Cannot set permission mode to bypassPermissions [bypass_not_launched]");
    auto bare = d.decode(R"({"type":"control_response","response":{"subtype":"error"}})");
    EXPECT_EQ(std::get<ControlResponse>(bare).error, "the agent refused the request");
}

TEST(StreamJsonNotice, SaysWhatAnApiRetryIs) {
    const auto row = json::parse(
        R"({"type":"system","subtype":"api_retry","attempt":8,"max_retries":10,)"
        R"("retry_delay_ms":90000,"error_status":401,"error":"authentication_failed"})");
    EXPECT_EQ(
        notice_text(row.as_object()),
        "retrying: 401 authentication_failed, attempt 8 of 10 in 90 s");
    const auto no_status =
        json::parse(R"({"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,)"
                    R"("retry_delay_ms":570,"error_status":null,"error":"unknown"})");
    EXPECT_EQ(notice_text(no_status.as_object()), "retrying: unknown, attempt 1 of 10 in 1 s");
    EXPECT_EQ(notice_text(json::parse(R"({"type":"system","subtype":"init"})").as_object()), "");
    EXPECT_EQ(
        init_session_id(
            json::parse(R"({"type":"system","subtype":"init","session_id":"abc"})").as_object()),
        "abc");
}

// The event a frame row is, as a word and its one field, for tables ("" when a plain frame).
std::string event_of(const std::string& line) {
    auto row = json::parse(line).as_object();
    const auto before = json::serialize(row);
    auto ev = frame_event(row);
    if (!ev) {
        return json::serialize(row) == before ? "frame" : "frame, changed";
    }
    if (json::serialize(event_row(*ev)) != before) {
        return "event row changed";
    }
    if (const auto* s = std::get_if<SessionStateChanged>(&*ev)) {
        return "state " + s->state + (s->requires_action() ? " (waits)" : "");
    }
    if (const auto* s = std::get_if<SessionStarted>(&*ev)) {
        return "started " + s->session_id;
    }
    if (std::holds_alternative<ConversationReset>(*ev)) {
        return "reset";
    }
    return "other";
}

TEST(StreamJsonFrameEvents, NamesTheProtocolRowsAndLeavesFramesAlone) {
    // The first row of a real `claude -p --output-format stream-json` capture (2.1.7).
    const auto capture =
        fixture("charlieyou_claude-agent-sdk-gleam/test_fixtures_golden_basic_query.ndjson");
    const auto init = capture.substr(0, capture.find('\n'));
    ASSERT_NE(init.find(R"("subtype":"init")"), std::string::npos);
    const std::vector<Case> cases = {
        {"real init", init, "started 1d1e46f9-35c7-4834-b529-846d5bb82288"},
        // session_state_changed as Claude Code 2.1.328 writes it with
        // CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS (tests/support/fake_agent.py copies it).
        {"requires action",
         R"({"type":"system","subtype":"session_state_changed","state":"requires_action",)"
         R"("session_id":"s","uuid":"u"})",
         "state requires_action (waits)"},
        {"running",
         R"({"type":"system","subtype":"session_state_changed","state":"running"})",
         "state running"},
        {"idle",
         R"({"type":"system","subtype":"session_state_changed","state":"idle"})",
         "state idle"},
        {"state missing", R"({"type":"system","subtype":"session_state_changed"})", "state "},
        {"clear", R"({"type":"conversation_reset","trigger":"clear"})", "reset"},
        {"init without session", R"({"type":"system","subtype":"init"})", "frame"},
        {"init with empty session",
         R"({"type":"system","subtype":"init","session_id":""})",
         "frame"},
        {"api retry", R"({"type":"system","subtype":"api_retry","attempt":1})", "frame"},
        {"not a system row",
         R"({"type":"assistant","subtype":"session_state_changed","state":"requires_action"})",
         "frame"},
        {"agent's own permission row",
         R"({"type":"system","subtype":"permission_request","request_id":"r1"})",
         "frame"},
        {"result", R"({"type":"result","subtype":"init","session_id":"s"})", "frame"},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(event_of(c.line), c.want) << c.name;
    }
}

TEST(StreamJsonPermissions, ReadsAPromptIntoItsFields) {
    struct Prompt {
        const char* name;
        std::string request; // the control_request's `request` object
        std::string title;
        std::optional<std::string> tool_use_id;
        std::string input;
    };

    const std::vector<Prompt> cases = {
        // As Claude Code 2.1.328 sends it (tests/e2e/claude_test.cpp).
        {"with a description",
         R"({"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch x"},)"
         R"("description":"Create x","tool_use_id":"toolu_1"})",
         "Create x",
         "toolu_1",
         R"({"command":"touch x"})"},
        {"a title wins",
         R"({"subtype":"can_use_tool","tool_name":"Bash","title":"Run it?","description":"d"})",
         "Run it?",
         std::nullopt,
         "null"},
        {"neither",
         R"({"subtype":"can_use_tool","tool_name":"Write"})",
         "Allow Write?",
         std::nullopt,
         "null"},
        {"a tool_use_id not a string",
         R"({"subtype":"can_use_tool","tool_name":"Bash","tool_use_id":7})",
         "Allow Bash?",
         std::nullopt,
         "null"},
    };
    for (const auto& c : cases) {
        const auto req =
            json::parse(
                R"({"type":"control_request","request_id":"r9","request":)" + c.request + "}")
                .as_object();
        const auto p = permission_request(req);
        EXPECT_EQ(p.request_id, "r9") << c.name;
        EXPECT_EQ(p.title, c.title) << c.name;
        EXPECT_EQ(p.tool_use_id, c.tool_use_id) << c.name;
        EXPECT_EQ(json::serialize(p.input), c.input) << c.name;
        EXPECT_EQ(json::serialize(p.row()), json::serialize(permission_request_row(req))) << c.name;
    }
}

TEST(StreamJsonControl, AnswersAtOnceWhatTheHostHoldsNotOpen) {
    struct Answer {
        const char* name;
        std::string request;  // the control_request's `request` object
        std::string response; // the control_response's `response` object
    };

    const std::vector<Answer> cases = {
        {"a permission prompt nobody hosts",
         R"({"subtype":"can_use_tool","tool_name":"Bash","input":{}})",
         R"({"subtype":"success","request_id":"c1","response":{"behavior":"deny",)"
         R"("message":"no one can answer permission prompts here"}})"},
        {"a hook",
         R"({"subtype":"hook_callback","callback_id":"h"})",
         R"({"subtype":"success","request_id":"c1","response":{}})"},
        {"an MCP message",
         R"({"subtype":"mcp_message","server_name":"x","message":{"jsonrpc":"2.0","id":4}})",
         R"({"subtype":"success","request_id":"c1","response":{"mcp_response":{"jsonrpc":"2.0",)"
         R"("id":4,"error":{"code":-32601,"message":"no such MCP server in sluice"}}}})"},
        {"an MCP notification (no id)",
         R"({"subtype":"mcp_message","message":{"jsonrpc":"2.0"}})",
         R"({"subtype":"success","request_id":"c1","response":{"mcp_response":{"jsonrpc":"2.0",)"
         R"("error":{"code":-32601,"message":"no such MCP server in sluice"}}}})"},
        {"an elicitation",
         R"({"subtype":"elicitation","message":"pick one"})",
         R"({"subtype":"success","request_id":"c1","response":{"action":"decline"}})"},
        {"anything else",
         R"({"subtype":"something_new"})",
         R"({"subtype":"error","request_id":"c1",)"
         R"("error":"sluice does not handle control requests"})"},
        {"no subtype",
         R"({})",
         R"({"subtype":"error","request_id":"c1",)"
         R"("error":"sluice does not handle control requests"})"},
    };
    for (const auto& c : cases) {
        Decoder d;
        auto decoded =
            d.decode(R"({"type":"control_request","request_id":"c1","request":)" + c.request + "}");
        ASSERT_TRUE(std::holds_alternative<ControlRequest>(decoded)) << c.name;
        const auto line = encode_default_answer(std::get<ControlRequest>(decoded));
        ASSERT_EQ(line.find('\n'), line.size() - 1) << c.name;
        const auto row = json::parse(line);
        EXPECT_EQ(row.at("type"), "control_response") << c.name;
        EXPECT_EQ(json::serialize(row.at("response")), c.response) << c.name;
    }
}

} // namespace
} // namespace sluice::runtime
