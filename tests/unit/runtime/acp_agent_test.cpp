// Tests of the acp agent against tests/support/fake_acp.py, a stand-in ACP agent for what a real
// one cannot be made to do on demand (plans, edits, file reads in and out of its folder,
// terminals, a cancel it ignores, a crash, a bad line, a session it cannot load). A real agent
// (Qwen Code) runs in tests/e2e/acp_test.cpp.
#include "runtime/agents/acp_updates.hpp"
#include "support/files.hpp"
#include "support/io_loop.hpp"
#include "unit/conversation/fixtures.hpp"
#include "unit/runtime/turn_recorder.hpp"

#include <sluice/runtime/agents/acp_agent.hpp>
#include <sluice/runtime/agents/agent.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace sluice::runtime {
namespace {

namespace json = boost::json;
using test::events_of;
using test::run_turn;
using test::TurnRecorder;
using namespace std::chrono_literals;

std::string fake_acp() {
    return (std::filesystem::path(__FILE__).parent_path() / "../../support/fake_acp.py")
        .lexically_normal()
        .string();
}

struct Fake {
    sluice::test::TempDir dir;
    std::string log = dir.file("received.jsonl");
    std::string sessions = dir.file("sessions");
    std::filesystem::path work = std::filesystem::path(dir.path()) / "work";
    AcpAgentConfig config;

    explicit Fake(std::vector<std::string> env = {}) {
        std::filesystem::create_directories(work);
        config.argv = {"python3", fake_acp()};
        config.working_dir = work.string();
        config.env = {"FAKE_ACP_LOG=" + log, "FAKE_ACP_SESSIONS=" + sessions};
        for (auto& e : env) {
            config.env.push_back(std::move(e));
        }
    }

    // Every message the fake received with `method`.
    [[nodiscard]] std::vector<json::object> received(std::string_view method) const {
        std::vector<json::object> out;
        std::istringstream in(sluice::test::slurp(log));
        for (std::string line; std::getline(in, line);) {
            auto v = json::parse(line).as_object();
            if (const auto* m = v.if_contains("method");
                m != nullptr && m->is_string() && m->get_string() == method) {
                out.push_back(std::move(v));
            }
        }
        return out;
    }
};

// The content blocks of the assistant rows of `rec`, in order.
std::vector<json::object> blocks(const TurnRecorder& rec) {
    std::vector<json::object> out;
    for (const auto& r : rec.rows()) {
        if (r.at("type") != "assistant") {
            continue;
        }
        for (const auto& b : r.at("message").at("content").as_array()) {
            out.push_back(b.as_object());
        }
    }
    return out;
}

// The tool_result blocks of the user rows of `rec`.
std::vector<json::object> results(const TurnRecorder& rec) {
    std::vector<json::object> out;
    for (const auto& r : rec.rows()) {
        if (r.at("type") == "user") {
            out.push_back(r.at("message").at("content").as_array().front().as_object());
        }
    }
    return out;
}

std::string last_text(const TurnRecorder& rec) {
    std::string text;
    for (const auto& b : blocks(rec)) {
        if (b.at("type") == "text") {
            text = std::string(b.at("text").as_string());
        }
    }
    return text;
}

std::shared_ptr<TurnRecorder> finished(
    sluice::test::IoLoop& loop, Agent& agent, std::string prompt, CancellationToken cancel = {}) {
    auto rec = run_turn(agent, std::move(prompt), std::move(cancel));
    EXPECT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    return rec;
}

TEST(AcpCommand, SplitsOnBlanksKeepsQuotedBlanksAndRefusesAnUnclosedQuote) {
    std::string why;
    EXPECT_EQ(
        *acp::split_command("gemini  --acp", why), (std::vector<std::string>{"gemini", "--acp"}));
    EXPECT_EQ(
        *acp::split_command(R"(qwen --acp --model 'a b' "c d"e)", why),
        (std::vector<std::string>{"qwen", "--acp", "--model", "a b", "c de"}));
    EXPECT_EQ(*acp::split_command("a ''", why), (std::vector<std::string>{"a", ""}));
    EXPECT_FALSE(acp::split_command("qwen 'oops", why));
    EXPECT_NE(why.find("unclosed quote"), std::string::npos);
    EXPECT_FALSE(acp::split_command("   ", why));
}

TEST(AcpAgent, AnswersAsFramesWithThinkingUsageAndOneSession) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_acp_agent(loop.executor(), fake.config);
    EXPECT_EQ(agent->kind(), "acp");
    auto rec = finished(loop, *agent, "hello");
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
    EXPECT_EQ(
        rec->row_types(), (std::vector<std::string>{"system", "assistant", "assistant", "result"}));
    const auto init = rec->rows().front();
    EXPECT_EQ(init.at("subtype"), "init");
    EXPECT_EQ(init.at("agent"), "acp");
    EXPECT_EQ(init.at("agent_name"), "Fake ACP");
    EXPECT_EQ(init.at("resumed"), false);
    const std::string session(init.at("session_id").as_string());
    EXPECT_EQ(session.rfind("sess-", 0), 0U);
    const auto b = blocks(*rec);
    ASSERT_EQ(b.size(), 2U);
    EXPECT_EQ(b[0].at("type"), "thinking");
    EXPECT_EQ(b[0].at("thinking"), "pondering");
    EXPECT_EQ(b[1].at("text"), "echo: hello (prompts: 1)") << "the chunks, gathered";
    EXPECT_EQ(rec->text(), "echo: hello (prompts: 1)") << "and each a preview";
    EXPECT_EQ(rec->thinking(), "pondering");
    const auto result = rec->rows().back();
    EXPECT_EQ(result.at("subtype"), "success");
    EXPECT_EQ(result.at("result"), "echo: hello (prompts: 1)");
    EXPECT_EQ(result.at("usage").at("input_tokens"), 15) << "cached input is counted apart";
    EXPECT_EQ(result.at("usage").at("cache_read_input_tokens"), 5);
    EXPECT_EQ(result.at("usage").at("output_tokens"), 10);

    auto second = finished(loop, *agent, "again");
    EXPECT_EQ(second->row_types(), (std::vector<std::string>{"assistant", "assistant", "result"}))
        << "the same process and session";
    EXPECT_EQ(last_text(*second), "echo: again (prompts: 2)");
    const auto message_ids = [](const TurnRecorder& r) {
        std::set<std::string> ids;
        for (const auto& row : r.rows()) {
            if (row.at("type") == "assistant") {
                ids.insert(std::string(row.at("message").at("id").as_string()));
            }
        }
        return ids;
    };
    auto ids = message_ids(*rec);
    const auto more = message_ids(*second);
    EXPECT_EQ(ids.size(), 2U);
    ids.insert(more.begin(), more.end());
    EXPECT_EQ(ids.size(), 4U) << "message ids are unique across turns";
    EXPECT_EQ(fake.received("session/new").size(), 1U);
    EXPECT_EQ(fake.received("initialize").size(), 1U);
    const auto init_params = fake.received("initialize").front().at("params");
    EXPECT_EQ(init_params.at("protocolVersion"), 1);
    EXPECT_EQ(init_params.at("clientCapabilities").at("terminal"), false);
    EXPECT_EQ(init_params.at("clientCapabilities").at("fs").at("readTextFile"), true);
    const auto new_params = fake.received("session/new").front().at("params");
    EXPECT_EQ(
        new_params.at("cwd").as_string(), std::filesystem::weakly_canonical(fake.work).string());
    const auto prompt = fake.received("session/prompt").back().at("params");
    EXPECT_EQ(prompt.at("sessionId").as_string(), session);
    EXPECT_EQ(prompt.at("prompt").as_array().front().at("text"), "again");
}

TEST(AcpAgent, ToolCallsEditsAndPlansAreTheToolsThePageDraws) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_acp_agent(loop.executor(), fake.config);
    auto rec = finished(loop, *agent, "tool");
    auto b = blocks(*rec);
    ASSERT_GE(b.size(), 2U);
    EXPECT_EQ(b[0].at("type"), "tool_use");
    EXPECT_EQ(b[0].at("name"), "Bash");
    EXPECT_EQ(b[0].at("id"), "call_1");
    EXPECT_EQ(b[0].at("input").at("command"), "ls");
    EXPECT_EQ(b[0].at("input").at("description"), "list");
    auto r = results(*rec);
    ASSERT_EQ(r.size(), 1U);
    EXPECT_EQ(r[0].at("tool_use_id"), "call_1");
    EXPECT_EQ(r[0].at("content"), "a\nb");
    EXPECT_EQ(r[0].at("is_error"), false);

    rec = finished(loop, *agent, "edit");
    b = blocks(*rec);
    ASSERT_GE(b.size(), 1U);
    EXPECT_EQ(b[0].at("name"), "Edit");
    EXPECT_EQ(b[0].at("input").at("file_path"), "/w/f.txt");
    EXPECT_EQ(b[0].at("input").at("old_string"), "old\n");
    EXPECT_EQ(b[0].at("input").at("new_string"), "new\n");
    r = results(*rec);
    ASSERT_EQ(r.size(), 1U) << "a call that arrives completed is shown with its result";
    EXPECT_EQ(r[0].at("content"), "edited /w/f.txt");

    rec = finished(loop, *agent, "plan");
    b = blocks(*rec);
    ASSERT_GE(b.size(), 1U);
    EXPECT_EQ(b[0].at("name"), "TodoWrite");
    const auto todos = b[0].at("input").at("todos").as_array();
    ASSERT_EQ(todos.size(), 3U);
    EXPECT_EQ(todos[1].at("content"), "two");
    EXPECT_EQ(todos[1].at("status"), "in_progress");
}

TEST(AcpAgent, APermissionRequestIsAPromptAnsweredWithTheOptionChosen) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_acp_agent(loop.executor(), fake.config);
    for (const bool allow : {false, true}) {
        auto rec = run_turn(*agent, "ask");
        ASSERT_TRUE(loop.until([&] { return !events_of<PermissionRequest>(*rec).empty(); }, 20s));
        const auto ask = events_of<PermissionRequest>(*rec).front();
        EXPECT_EQ(ask.tool_name, "Bash");
        EXPECT_EQ(ask.title, "Run rm -rf x?");
        EXPECT_EQ(ask.tool_use_id, "call_ask");
        EXPECT_EQ(ask.input.at("command"), "rm -rf x");
        EXPECT_EQ(ask.decision_reason, "it deletes x");
        agent->answer_permission(
            {.request_id = ask.request_id, .allow = allow, .message = {}, .updated_input = {}});
        ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
        EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
        EXPECT_EQ(last_text(*rec), allow ? "outcome: proceed" : "outcome: cancel")
            << "allow picks allow_once, deny reject_once";
        const auto b = blocks(*rec);
        ASSERT_FALSE(b.empty());
        EXPECT_EQ(b[0].at("name"), "Bash") << "the call asked about is shown before the prompt";
        const auto r = results(*rec);
        ASSERT_EQ(r.size(), 1U);
        EXPECT_EQ(r[0].at("is_error"), !allow);
    }
}

TEST(AcpAgent, CancelSendsSessionCancelAnswersOpenPromptsAndTheTurnEndsCancelled) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_acp_agent(loop.executor(), fake.config);
    CancellationToken cancel;
    auto rec = run_turn(*agent, "slow", cancel);
    ASSERT_TRUE(loop.until([&] { return rec->previews().size() >= 3; }, 20s));
    cancel.cancel();
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);
    EXPECT_EQ(fake.received("session/cancel").size(), 1U);
    EXPECT_EQ(rec->rows().back().at("subtype"), "interrupted");

    // A prompt waiting on a person: cancel answers it `cancelled` for them.
    CancellationToken cancel2;
    rec = run_turn(*agent, "ask", cancel2);
    ASSERT_TRUE(loop.until([&] { return !events_of<PermissionRequest>(*rec).empty(); }, 20s));
    cancel2.cancel();
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);

    auto after = finished(loop, *agent, "after");
    EXPECT_EQ(after->end().state, TurnEnd::State::ended) << after->end().error;
    EXPECT_EQ(fake.received("initialize").size(), 1U) << "the same process goes on";
}

TEST(AcpAgent, ACancelTheAgentIgnoresEndsTheProcessAndTheSessionIsLoaded) {
    sluice::test::IoLoop loop;
    Fake fake;
    fake.config.cancel_grace = 300ms;
    fake.config.terminate_grace = 500ms;
    auto agent = make_acp_agent(loop.executor(), fake.config);
    CancellationToken cancel;
    auto rec = run_turn(*agent, "deaf", cancel);
    ASSERT_TRUE(loop.until([&] { return !rec->previews().empty(); }, 20s));
    cancel.cancel();
    ASSERT_TRUE(loop.until([&] { return rec->end_count() > 0; }, 20s));
    EXPECT_EQ(rec->end().state, TurnEnd::State::cancelled);
    const std::string session(rec->rows().front().at("session_id").as_string());

    auto next = finished(loop, *agent, "after");
    EXPECT_EQ(next->end().state, TurnEnd::State::ended) << next->end().error;
    ASSERT_EQ(fake.received("session/load").size(), 1U) << "a new process loads the session";
    EXPECT_EQ(
        fake.received("session/load").front().at("params").at("sessionId").as_string(), session);
    EXPECT_EQ(next->rows().front().at("resumed"), true);
    EXPECT_EQ(last_text(*next), "echo: after (prompts: 2)")
        << "the loaded history is not shown again, and the agent has it";
}

TEST(AcpAgent, ACrashABadLineOrARefusedPromptFailsTheTurnWithTheReason) {
    sluice::test::IoLoop loop;
    Fake fake;
    auto agent = make_acp_agent(loop.executor(), fake.config);
    auto rec = finished(loop, *agent, "exit");
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_EQ(
        rec->end().error, "python3 exited (exit status 3): fatal: the fake was asked to exit");

    rec = finished(loop, *agent, "garbage");
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_EQ(rec->end().error, "python3 wrote a line that is not a JSON-RPC message: (not JSON)");

    rec = finished(loop, *agent, "refuse");
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_EQ(rec->end().error, "python3 failed the prompt: the fake refuses");
    EXPECT_EQ(rec->rows().back().at("is_error"), true);

    rec = finished(loop, *agent, "fine again");
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
}

TEST(AcpAgent, FilesAreServedInsideTheWorkingDirectoryOnlyAndTerminalsAreRefused) {
    sluice::test::IoLoop loop;
    Fake fake;
    const auto inside = fake.work / "notes.txt";
    std::ofstream(inside) << "one\ntwo\nthree\n";
    const auto outside = std::filesystem::path(fake.dir.path()) / "secret.txt";
    std::ofstream(outside) << "secret\n";
    std::filesystem::create_symlink(outside, fake.work / "link.txt");
    auto agent = make_acp_agent(loop.executor(), fake.config);

    auto rec = finished(loop, *agent, "read " + inside.string());
    EXPECT_EQ(last_text(*rec), "read: one\ntwo\nthree\n");
    rec = finished(loop, *agent, "read2 " + inside.string());
    EXPECT_EQ(last_text(*rec), "read: two\n") << "line 2, one line";
    rec = finished(loop, *agent, "read " + outside.string());
    EXPECT_NE(last_text(*rec).find("is outside the seat's working directory"), std::string::npos)
        << last_text(*rec);
    rec = finished(loop, *agent, "read " + (fake.work / "link.txt").string());
    EXPECT_NE(last_text(*rec).find("is outside"), std::string::npos)
        << "a link out of the folder is followed, then refused: " << last_text(*rec);
    rec = finished(loop, *agent, "read " + (fake.work / ".." / "secret.txt").string());
    EXPECT_NE(last_text(*rec).find("is outside"), std::string::npos) << last_text(*rec);
    rec = finished(loop, *agent, "read relative.txt");
    EXPECT_NE(last_text(*rec).find("must be absolute"), std::string::npos) << last_text(*rec);

    const auto made = fake.work / "sub" / "made.txt";
    rec = finished(loop, *agent, "write " + made.string());
    EXPECT_EQ(last_text(*rec), "write ok");
    EXPECT_EQ(sluice::test::slurp(made.string()), "written by fake");
    rec = finished(loop, *agent, "write " + (fake.work / "link.txt").string());
    EXPECT_NE(last_text(*rec).find("is outside"), std::string::npos) << last_text(*rec);
    EXPECT_EQ(sluice::test::slurp(outside.string()), "secret\n") << "nothing written out there";

    rec = finished(loop, *agent, "terminal");
    EXPECT_EQ(
        last_text(*rec),
        "terminal error: sluice offers no terminals (clientCapabilities.terminal is false)");
}

TEST(AcpAgent, ASessionTheAgentCannotLoadFailsOnceThenANewOneStarts) {
    sluice::test::IoLoop loop;
    Fake fake;
    fake.config.session_id = "sess-gone";
    auto agent = make_acp_agent(loop.executor(), fake.config);
    auto rec = finished(loop, *agent, "hello");
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("could not load session sess-gone"), std::string::npos)
        << rec->end().error;
    EXPECT_NE(rec->end().error.find("session not found"), std::string::npos) << rec->end().error;
    rec = finished(loop, *agent, "hello again");
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
    EXPECT_EQ(fake.received("session/new").size(), 1U);
}

TEST(AcpAgent, AnAgentThatCannotLoadSessionsStartsANewOneAndSaysSo) {
    sluice::test::IoLoop loop;
    Fake fake({"FAKE_ACP_NO_LOAD=1"});
    fake.config.session_id = "sess-old";
    auto agent = make_acp_agent(loop.executor(), fake.config);
    auto rec = finished(loop, *agent, "hello");
    EXPECT_EQ(rec->end().state, TurnEnd::State::ended) << rec->end().error;
    EXPECT_EQ(fake.received("session/load").size(), 0U);
    const auto init = rec->rows().front();
    EXPECT_EQ(init.at("resumed"), false);
    EXPECT_NE(std::string(init.at("not_resumed").as_string()).find("sess-old"), std::string::npos);
}

TEST(AcpAgent, AnotherProtocolVersionOrASilentStartFailsTheTurn) {
    sluice::test::IoLoop loop;
    {
        Fake fake({"FAKE_ACP_VERSION=2"});
        auto agent = make_acp_agent(loop.executor(), fake.config);
        auto rec = finished(loop, *agent, "hello");
        EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
        EXPECT_EQ(rec->end().error, "python3 speaks ACP version 2; sluice speaks version 1");
    }
    Fake fake({"FAKE_ACP_NO_INIT=1"});
    fake.config.start_timeout = 500ms;
    fake.config.terminate_grace = 300ms;
    auto agent = make_acp_agent(loop.executor(), fake.config);
    auto rec = finished(loop, *agent, "hello");
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_EQ(rec->end().error, "python3 did not answer its start within 500 ms");
}

// Real Qwen Code 0.24.4 messages (tests/fixtures/acp): what it sent during its second prompt (a
// shell command it asked permission for, its result, the answer's chunks, usage in _meta) as
// the frames the page draws.
TEST(AcpTrace, RealQwenUpdatesBecomeTheFramesThePageDraws) {
    const auto path = std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "fixtures" / "acp"
                      / "qwen-prompt-permission.jsonl";
    std::istringstream in(sluice::test::slurp(path.string()));
    std::vector<json::object> recv;
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) {
            continue;
        }
        auto v = json::parse(line).as_object();
        if (v.contains("msg") && v.at("dir") == "recv") {
            recv.push_back(v.at("msg").as_object());
        }
    }
    ASSERT_GT(recv.size(), 10U);
    // From the second prompt's first update to its answer (id 4).
    acp::TurnTranslator t("24034d66-4422-40b4-82a3-18f630efe962", "t1");
    std::vector<json::object> rows;
    std::string previews;
    bool in_prompt = false;
    std::optional<PermissionRequest> asked;
    for (const auto& m : recv) {
        const auto* id = m.if_contains("id");
        if (!in_prompt) {
            in_prompt = id != nullptr && *id == 3 && m.contains("result");
            continue;
        }
        const auto* method = m.if_contains("method");
        if (method != nullptr && *method == "session/update") {
            auto out = t.on_update(m.at("params").at("update").as_object());
            rows.insert(rows.end(), out.rows.begin(), out.rows.end());
            if (out.preview) {
                previews += std::get<llm::Text>(*out.preview).text;
            }
        } else if (method != nullptr && *method == "session/request_permission") {
            const auto& params = m.at("params").as_object();
            auto out = t.on_requested_call(params.at("toolCall").as_object());
            rows.insert(rows.end(), out.rows.begin(), out.rows.end());
            asked = acp::permission_of(params, "0");
            EXPECT_EQ(
                json::serialize(acp::permission_result(params.at("options"), true)),
                R"({"outcome":{"outcome":"selected","optionId":"proceed_once"}})");
            EXPECT_EQ(
                json::serialize(acp::permission_result(params.at("options"), false)),
                R"({"outcome":{"outcome":"selected","optionId":"cancel"}})");
        } else if (id != nullptr && *id == 4 && m.contains("result")) {
            auto out = t.finish(m.at("result").at("stopReason").as_string(), "", nullptr);
            rows.insert(rows.end(), out.rows.begin(), out.rows.end());
            break;
        }
    }
    ASSERT_TRUE(asked);
    EXPECT_EQ(asked->tool_name, "Bash");
    EXPECT_EQ(asked->title, "Run echo hi > f.txt?");
    EXPECT_EQ(asked->tool_use_id, "call_fake000007");
    ASSERT_EQ(rows.size(), 4U) << "tool_use, tool_result, text, result";
    const auto& use = rows[0].at("message").at("content").as_array().front();
    EXPECT_EQ(use.at("type"), "tool_use");
    EXPECT_EQ(use.at("name"), "Bash");
    EXPECT_EQ(use.at("input").at("command"), "echo hi > f.txt");
    const auto& result = rows[1].at("message").at("content").as_array().front();
    EXPECT_EQ(result.at("tool_use_id"), "call_fake000007");
    EXPECT_NE(
        std::string(result.at("content").as_string()).find("Exit Code: 0"), std::string::npos);
    const auto& text = rows[2].at("message").at("content").as_array().front();
    EXPECT_EQ(text.at("text").as_string().subview().substr(0, 22), "tool output: Command: ");
    EXPECT_EQ(previews, text.at("text").as_string()) << "the previews add up to the frame";
    EXPECT_EQ(rows[3].at("type"), "result");
    EXPECT_EQ(rows[3].at("subtype"), "success");
    // Qwen's usage of the prompt's two model calls, from its chunks' _meta.
    EXPECT_EQ(rows[3].at("usage").at("input_tokens"), 2427 + 2523);
    EXPECT_EQ(rows[3].at("usage").at("output_tokens"), 17 + 34);
}

TEST(AcpAgent, AMissingExecutableFailsTheTurnWithTheReason) {
    sluice::test::IoLoop loop;
    Fake fake;
    fake.config.argv = {"/nonexistent/acp-agent", "--acp"};
    auto agent = make_acp_agent(loop.executor(), fake.config);
    auto rec = finished(loop, *agent, "hello");
    EXPECT_EQ(rec->end().state, TurnEnd::State::failed);
    EXPECT_NE(rec->end().error.find("acp-agent"), std::string::npos) << rec->end().error;
}

} // namespace
} // namespace sluice::runtime
