// Unit tests of hub/seat.hpp on a real io_context with a fake agent and a temp data dir.
#include "unit/hub/hub_test_support.hpp"

#include <sluice/hub/seat.hpp>

#include <gtest/gtest.h>

#include <future>

namespace sluice::hub {
namespace {

using namespace test;
using Kind = OutEvent::Kind;

// A seat in a temp folder, its writer, and the fake agents it made.
struct SeatRig {
    explicit SeatRig(std::size_t writer_capacity = WRITER_QUEUE_CAPACITY)
        : writer(std::make_shared<Writer>(writer_capacity)) {}

    ~SeatRig() {
        if (gate) {
            gate->set_value();
        }
        writer->drain();
    }

    SeatRig(const SeatRig&) = delete;
    SeatRig& operator=(const SeatRig&) = delete;

    std::shared_ptr<Seat> open(SeatSpec spec = {}) {
        std::filesystem::create_directories(dir.path() / "s");
        auto r = Seat::open(
            io,
            std::move(spec),
            SeatOptions{dir.path() / "s", fake_factory(seen), writer, 2, 20ms, Budget{}});
        EXPECT_TRUE(r.has_value());
        return r ? *r : nullptr;
    }

    // Holds the writer (its one thread) until `release`.
    void block_writer() {
        gate.emplace();
        auto fut = gate->get_future().share();
        ASSERT_TRUE(writer->submit(
            [fut] {
                fut.wait();
                return boost::system::error_code{};
            },
            io.get_executor(),
            nullptr));
    }

    void release() {
        gate->set_value();
        gate.reset();
    }

    std::vector<OutEvent> collect(Seat& seat, Subscriber& sub) {
        return on_strand(io, seat, [&] {
            std::vector<OutEvent> out;
            seat.collect(sub, out);
            return out;
        });
    }

    // Plays the agent: a call on the turn's sink, on the seat's strand.
    template <class Fn>
    void play(Seat& seat, Fn fn) {
        on_strand(io, seat, std::move(fn));
    }

    std::shared_ptr<FakeTurn> wait_turn(std::size_t n) {
        EXPECT_TRUE(run_until(io, [&] { return seen->turns.size() >= n; }));
        return seen->turns.size() >= n ? seen->turns[n - 1] : nullptr;
    }

    net::io_context io;
    TempDir dir;
    std::shared_ptr<FakeAgents> seen = std::make_shared<FakeAgents>();
    std::shared_ptr<Writer> writer;
    std::optional<std::promise<void>> gate;
};

void end_turn(FakeTurn& t) {
    t.sink->on_row(result_row());
    t.ended = true;
    t.sink->on_end(runtime::TurnEnd{});
}

TEST(Seat, PublishesAFrameOnlyOnceItIsInTheTranscript) {
    SeatRig rig;
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    EXPECT_EQ(kinds_of(rig.collect(*seat, *sub)), std::vector<Kind>{Kind::connected});

    rig.block_writer(); // the prompt row's append cannot complete yet
    ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("hello").has_value(); }));
    auto turn = rig.wait_turn(1);
    rig.play(*seat, [&] { turn->sink->on_row(assistant_row("hi there")); });
    run_until(
        rig.io, [] { return false; }, 20ms);
    for (const auto& ev : rig.collect(*seat, *sub)) {
        EXPECT_NE(ev.kind, Kind::frame) << "a frame was published before its append completed";
    }
    rig.release();
    std::vector<std::string> frames;
    std::vector<std::string> on_disk;
    ASSERT_TRUE(run_until(rig.io, [&] {
        for (const auto& ev : rig.collect(*seat, *sub)) {
            if (ev.kind == Kind::frame) {
                frames.emplace_back(ev.frame->json());
                on_disk.push_back(
                    slurp(rig.dir.path() / "s" / "transcript.jsonl")); // as it is seen
            }
        }
        return frames.size() == 2;
    }));
    for (std::size_t i = 0; i < frames.size(); ++i) {
        EXPECT_NE(on_disk[i].find(frames[i]), std::string::npos)
            << "frame " << i << " was not on disk when seen";
    }
}

TEST(Seat, HoldsPreviewsBehindRowsStillBeingAppended) {
    SeatRig rig;
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    (void)rig.collect(*seat, *sub);
    ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("hello").has_value(); }));
    auto turn = rig.wait_turn(1);
    ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames == 1; }));
    (void)rig.collect(*seat, *sub);
    rig.block_writer();
    rig.play(*seat, [&] {
        turn->sink->on_row(assistant_row("A"));
        turn->sink->on_preview(llm::Text{"held, then superseded by B"});
        turn->sink->on_row(assistant_row("B"));
        turn->sink->on_preview(llm::Text{"after B"});
    });
    for (const auto& ev : rig.collect(*seat, *sub)) {
        EXPECT_NE(ev.kind, Kind::preview) << "a preview was shown before the row it follows";
    }
    rig.release();
    std::vector<OutEvent> seen;
    ASSERT_TRUE(run_until(rig.io, [&] {
        auto out = rig.collect(*seat, *sub);
        seen.insert(seen.end(), out.begin(), out.end());
        return !seen.empty() && seen.back().kind == Kind::preview;
    }));
    ASSERT_EQ(kinds_of(seen), (std::vector<Kind>{Kind::frame, Kind::frame, Kind::preview}));
    EXPECT_EQ(seen[2].data, R"({"kind":"text","delta":"after B"})");
    EXPECT_EQ(sub->gap_bytes(), 0U);
}

TEST(Seat, ReportsPreviewsLostWhileTheirRowWasBeingAppended) {
    SeatRig rig;
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    (void)rig.collect(*seat, *sub);
    rig.block_writer(); // the prompt row is still being appended while the flood comes
    ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("flood").has_value(); }));
    auto turn = rig.wait_turn(1);
    const std::string kib(1024, 'z');
    rig.play(*seat, [&] {
        for (int i = 0; i < 1024; ++i) {
            turn->sink->on_preview(llm::Text{kib});
        }
    });
    rig.release();
    std::uint64_t gap = 0;
    std::uint64_t shown = 0;
    ASSERT_TRUE(run_until(
        rig.io,
        [&] {
            for (const auto& ev : rig.collect(*seat, *sub)) {
                if (ev.kind == Kind::gap) {
                    gap +=
                        boost::json::parse(ev.data).at("dropped_bytes").to_number<std::uint64_t>();
                } else if (ev.kind == Kind::preview) {
                    shown += boost::json::parse(ev.data).at("delta").as_string().size();
                }
            }
            return gap + shown == 1024U * 1024U;
        }))
        << "gap " << gap << " + shown " << shown;
    EXPECT_GT(gap, 0U); // the loss is marked, not silent
}

TEST(Seat, RunsQueuedPromptsInOrder) {
    SeatRig rig;
    auto seat = rig.open();
    for (const char* p : {"one", "two", "three"}) {
        auto r = on_strand(rig.io, *seat, [&] { return seat->submit(p); });
        ASSERT_TRUE(r.has_value()) << r.error().message;
    }
    auto refused = on_strand(rig.io, *seat, [&] { return seat->submit("four"); });
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, make_error_code(errc::overloaded));
    EXPECT_NE(refused.error().message.find("at most 2"), std::string::npos)
        << refused.error().message;
    EXPECT_EQ(seat->summary().state, SeatState::queued);
    for (std::size_t n = 1; n <= 3; ++n) {
        auto turn = rig.wait_turn(n);
        ASSERT_TRUE(turn);
        rig.play(*seat, [&] { end_turn(*turn); });
    }
    ASSERT_EQ(rig.seen->turns.size(), 3U);
    EXPECT_EQ(rig.seen->turns[0]->prompt, "one");
    EXPECT_EQ(rig.seen->turns[1]->prompt, "two");
    EXPECT_EQ(rig.seen->turns[2]->prompt, "three");
    ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().state == SeatState::idle; }));
    EXPECT_EQ(seat->summary().turns, 3U);
}

TEST(Seat, CancelEndsTheRunningTurnAndTellsViewers) {
    SeatRig rig;
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    (void)rig.collect(*seat, *sub);
    ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("long job").has_value(); }));
    ASSERT_TRUE(rig.wait_turn(1));
    EXPECT_TRUE(on_strand(rig.io, *seat, [&] { return seat->cancel(); }));
    ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().state == SeatState::idle; }));
    std::vector<std::string> turns;
    for (const auto& ev : rig.collect(*seat, *sub)) {
        if (ev.kind == Kind::turn) {
            turns.push_back(ev.data);
        }
    }
    EXPECT_EQ(
        turns,
        (std::vector<std::string>{
            R"({"turn":1,"state":"started"})", R"({"turn":1,"state":"cancelled"})"}));
    EXPECT_FALSE(on_strand(rig.io, *seat, [&] { return seat->cancel(); }));
}

TEST(Seat, AFailedAppendIsNotPublishedAndFailsTheTurn) {
    SeatRig rig(/*writer_capacity=*/1);
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    (void)rig.collect(*seat, *sub);
    rig.block_writer(); // the one slot is taken: the prompt row's append is refused
    ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("hello").has_value(); }));
    const bool degraded =
        run_until(rig.io, [&] { return seat->summary().state == SeatState::degraded; });
    ASSERT_TRUE(degraded) << state_name(seat->summary().state) << " " << seat->summary().reason;
    const auto s = seat->summary();
    EXPECT_TRUE(s.degraded);
    EXPECT_GE(s.write_errors, 1U);
    EXPECT_NE(s.reason.find("writer queue is full"), std::string::npos) << s.reason;
    EXPECT_EQ(s.frames, 0U);
    std::vector<OutEvent> out = rig.collect(*seat, *sub);
    for (const auto& ev : out) {
        EXPECT_NE(ev.kind, Kind::frame);
    }
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.back().kind, Kind::turn);
    EXPECT_NE(out.back().data.find(R"("state":"failed")"), std::string::npos) << out.back().data;
    EXPECT_NE(out.back().data.find("writer queue is full"), std::string::npos) << out.back().data;
    rig.release();
    auto again = on_strand(rig.io, *seat, [&] { return seat->submit("again"); });
    ASSERT_FALSE(again.has_value()); // nothing is appended after a failed frame
    EXPECT_NE(again.error().message.find("degraded"), std::string::npos) << again.error().message;
}

boost::json::object tool_use_row(std::string_view id) {
    return boost::json::object{
        {"type", "assistant"},
        {"message",
         boost::json::object{
             {"role", "assistant"},
             {"content",
              boost::json::array{boost::json::object{
                  {"type", "tool_use"},
                  {"id", id},
                  {"name", "bash"},
                  {"input", boost::json::object{}}}}}}}};
}

std::vector<boost::json::value> transcript_rows(const std::filesystem::path& file) {
    std::vector<boost::json::value> rows;
    std::istringstream in(slurp(file));
    for (std::string l; std::getline(in, l);) {
        rows.push_back(boost::json::parse(l));
    }
    return rows;
}

TEST(Seat, ClosesATurnACrashLeftOpenBeforeServing) {
    SeatRig rig;
    SeatSpec spec;
    spec.id = "s-crash";
    spec.epoch = "e-crash";
    {
        auto seat = rig.open(spec);
        ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("run it").has_value(); }));
        auto turn = rig.wait_turn(1);
        rig.play(*seat, [&] { turn->sink->on_row(tool_use_row("toolu_1")); });
        ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames == 2; }));
        rig.writer->drain(); // the "crash": the seat goes without closing
    }
    EXPECT_TRUE(std::filesystem::exists(rig.dir.path() / "s" / "unsynced"));
    auto again = rig.open(spec);
    ASSERT_TRUE(again);
    const auto s = again->summary();
    EXPECT_EQ(s.frames, 4U);
    EXPECT_EQ(s.epoch, "e-crash"); // the same boot: nothing written was lost, no resync
    EXPECT_FALSE(std::filesystem::exists(rig.dir.path() / "s" / "unsynced"));
    const auto rows = transcript_rows(rig.dir.path() / "s" / "transcript.jsonl");
    ASSERT_EQ(rows.size(), 4U);
    const auto& block = rows[2].at("message").at("content").as_array().at(0);
    EXPECT_EQ(block.at("tool_use_id").as_string(), "toolu_1");
    EXPECT_EQ(block.at("is_error"), true);
    EXPECT_EQ(block.at("content").as_string(), INTERRUPTED_TOOL_TEXT);
    EXPECT_EQ(rows[3].at("result").as_string(), "interrupted");
    ASSERT_EQ(rig.seen->histories.size(), 2U);
    EXPECT_EQ(rig.seen->histories[1].size(), 4U); // the agent's next request sees a whole turn
}

TEST(Seat, ChangesItsEpochWhenTheTranscriptHoldsFewerFramesThanWerePublished) {
    SeatRig rig;
    SeatSpec spec;
    spec.id = "s-short";
    spec.epoch = "e-short";
    spec.published = 10; // the transcript will hold none of them
    auto seat = rig.open(spec);
    EXPECT_NE(seat->summary().epoch, "e-short");
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::string("e-short:3")); });
    EXPECT_EQ(kinds_of(rig.collect(*seat, *sub)), std::vector<Kind>{Kind::connected});
}

TEST(Seat, ACancelledTurnLeftWithoutItsResultIsClosedCancelled) {
    SeatRig rig;
    auto seat = rig.open();
    ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("go").has_value(); }));
    auto turn = rig.wait_turn(1);
    rig.play(*seat, [&] { turn->sink->on_row(tool_use_row("toolu_9")); });
    ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames == 2; }));
    on_strand(rig.io, *seat, [&] { seat->cancel(); });
    ASSERT_TRUE(run_until(rig.io, [&] {
        const auto s = seat->summary();
        return s.state == SeatState::idle && s.frames == 4;
    }));
    rig.writer->drain();
    const auto rows = transcript_rows(rig.dir.path() / "s" / "transcript.jsonl");
    ASSERT_EQ(rows.size(), 4U);
    EXPECT_EQ(rows[2].at("message").at("content").as_array().at(0).at("content"), "cancelled");
    EXPECT_EQ(rows[3].at("result").as_string(), "cancelled");
    EXPECT_FALSE(std::filesystem::exists(rig.dir.path() / "s" / "unsynced"));
}

TEST(Seat, CloseMidTurnRecordsAHubRestart) {
    SeatRig rig;
    SeatSpec spec;
    spec.id = "s-restart";
    spec.epoch = "e-restart";
    {
        auto seat = rig.open(spec);
        ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("go").has_value(); }));
        auto turn = rig.wait_turn(1);
        rig.play(*seat, [&] { turn->sink->on_row(tool_use_row("toolu_7")); });
        ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames == 2; }));
        on_strand(rig.io, *seat, [&] { seat->close(); });
        rig.writer->drain();
    }
    const auto rows = transcript_rows(rig.dir.path() / "s" / "transcript.jsonl");
    ASSERT_EQ(rows.size(), 4U);
    EXPECT_EQ(rows[3].at("result").as_string(), "interrupted by a hub restart");
    EXPECT_FALSE(std::filesystem::exists(rig.dir.path() / "s" / "unsynced"));
    auto again = rig.open(spec);
    EXPECT_EQ(again->summary().frames, 4U); // closed already: nothing added on open
    EXPECT_EQ(again->summary().epoch, "e-restart");
}

TEST(Seat, RestoresItsWindowAndHistoryAfterReopening) {
    SeatRig rig;
    SeatSpec spec;
    spec.id = "s-keep";
    spec.epoch = "e-keep";
    {
        auto seat = rig.open(spec);
        ASSERT_TRUE(
            on_strand(rig.io, *seat, [&] { return seat->submit("remember me").has_value(); }));
        auto turn = rig.wait_turn(1);
        rig.play(*seat, [&] {
            turn->sink->on_row(assistant_row("noted"));
            end_turn(*turn);
        });
        ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().state == SeatState::idle; }));
        EXPECT_EQ(seat->summary().frames, 3U);
        on_strand(rig.io, *seat, [&] { seat->close(); });
        rig.writer->drain();
    }
    auto again = rig.open(spec);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->summary().frames, 3U);
    ASSERT_EQ(rig.seen->histories.size(), 2U);
    EXPECT_EQ(rig.seen->histories[1].size(), 3U); // the agent is rebuilt from the window's rows
    std::optional<Result<HistoryPage>> page;
    on_strand(rig.io, *again, [&] {
        again->history(
            std::nullopt, 20, [&](Result<HistoryPage> p) { page.emplace(std::move(p)); });
    });
    ASSERT_TRUE(page.has_value() && page->has_value());
    auto& got = *page;
    EXPECT_NE(got->json().find("remember me"), std::string::npos);
    EXPECT_NE(got->json().find("noted"), std::string::npos);
    // A viewer of the old epoch resumes in place.
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *again, [&] { again->attach(sub, std::string("e-keep:1")); });
    EXPECT_EQ(kinds_of(rig.collect(*again, *sub)), (std::vector<Kind>{Kind::resumed, Kind::frame}));
}

TEST(Seat, AStalledSubscriberCostsAtMostItsPreviewBudget) {
    SeatRig rig;
    auto seat = rig.open();
    auto stalled = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(stalled, std::nullopt); });
    (void)rig.collect(*seat, *stalled);
    ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("flood").has_value(); }));
    auto turn = rig.wait_turn(1);
    ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames == 1; }));
    (void)rig.collect(*seat, *stalled); // the turn start and the prompt frame
    const std::string kib(1024, 'y');
    rig.play(*seat, [&] {
        for (int i = 0; i < 1024; ++i) { // 1 MiB of previews; the viewer reads nothing
            turn->sink->on_preview(llm::Text{kib});
        }
    });
    EXPECT_LE(stalled->preview_retained(), SUBSCRIBER_PREVIEW_LIMITS.retained_budget);
    const std::uint64_t lost = 1024U * 1024U - stalled->preview_retained();
    const auto out = rig.collect(*seat, *stalled);
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out[0].kind, Kind::gap);
    EXPECT_EQ(out[0].data, R"({"dropped_bytes":)" + std::to_string(lost) + "}");
    on_strand(rig.io, *seat, [&] { seat->detach(stalled); });
    EXPECT_EQ(seat->summary().preview_dropped_bytes, lost); // the hub's own counter agrees
}

TEST(Seat, AnUnavailableSeatRefusesPromptsWithItsReason) {
    SeatRig rig;
    SeatSpec spec;
    spec.agent = "process";
    auto seat = rig.open(spec);
    ASSERT_TRUE(seat);
    const auto s = seat->summary();
    EXPECT_EQ(s.state, SeatState::unavailable);
    EXPECT_EQ(s.reason, "agent kind 'process' needs --agent-cmd");
    auto r = on_strand(rig.io, *seat, [&] { return seat->submit("hi"); });
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, make_error_code(errc::conflict));
    EXPECT_NE(r.error().message.find("needs --agent-cmd"), std::string::npos) << r.error().message;
}

} // namespace
} // namespace sluice::hub

namespace sluice::hub {
namespace {

TEST(Seat, JoinersDuringATurnShareOneConnectedPageAndHistoryPage) {
    SeatRig rig;
    auto seat = rig.open();
    ASSERT_TRUE(on_strand(rig.io, *seat, [&] { return seat->submit("hello").has_value(); }));
    auto turn = rig.wait_turn(1);
    rig.play(*seat, [&] { turn->sink->on_row(assistant_row("part one")); });
    ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames >= 2; }));

    auto early = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(early, std::nullopt); });
    auto first = rig.collect(*seat, *early);
    ASSERT_EQ(kinds_of(first), std::vector<Kind>{Kind::connected});

    // The window grows (the front does not move): a joiner gets the same page, then the frames
    // after it from the window, not a page of its own.
    rig.play(*seat, [&] { turn->sink->on_row(assistant_row("part two")); });
    ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames >= 3; }));
    auto late = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(late, std::nullopt); });
    auto joined = rig.collect(*seat, *late);
    ASSERT_EQ(kinds_of(joined), (std::vector<Kind>{Kind::connected}));
    EXPECT_EQ(joined[0].shared.get(), first[0].shared.get()) << "a second page was built";
    EXPECT_EQ(joined[0].id, first[0].id);
    const auto replay = rig.collect(*seat, *late);
    ASSERT_EQ(kinds_of(replay), std::vector<Kind>{Kind::frame});
    EXPECT_NE(replay[0].frame->json().find("part two"), std::string::npos);

    // The window grows by far more than a quarter of the page: while the page is still being
    // sent (`first` holds it), joiners get it and replay the rest; once nobody holds it, a
    // joiner gets a page built from the window as it is now.
    rig.play(*seat, [&] {
        for (int i = 0; i < 4; ++i) {
            turn->sink->on_row(assistant_row(std::string(40 * 1024, 'x')));
        }
    });
    ASSERT_TRUE(run_until(rig.io, [&] { return seat->summary().frames >= 7; }));
    auto busy = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(busy, std::nullopt); });
    auto reused = rig.collect(*seat, *busy);
    ASSERT_EQ(kinds_of(reused), (std::vector<Kind>{Kind::connected}));
    EXPECT_EQ(reused[0].shared.get(), first[0].shared.get()) << "a page in use was built again";
    first.clear();
    joined.clear();
    reused.clear();
    auto fresh = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(fresh, std::nullopt); });
    const auto rebuilt = rig.collect(*seat, *fresh);
    ASSERT_EQ(kinds_of(rebuilt), (std::vector<Kind>{Kind::connected}));
    EXPECT_NE(rebuilt[0].shared->find(std::string(40 * 1024, 'x')), std::string::npos);

    // History: one page per request and window version, shared.
    const auto a = history_page(rig.io, *seat, std::nullopt, 20);
    const auto b = history_page(rig.io, *seat, std::nullopt, 20);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->body.get(), b->body.get());
    end_turn(*turn);
}

} // namespace
} // namespace sluice::hub
