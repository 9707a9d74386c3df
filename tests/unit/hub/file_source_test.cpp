// Unit tests of hub/file_source.hpp against its seat's feed: a real Claude Code transcript (a
// fixture, copied into a temporary folder so the test can grow, truncate and replace it) opened
// at its first viewer, followed as it grows, opened again under a new epoch when truncated or
// replaced, never written, and every write to its seat refused.
#include "unit/hub/hub_test_support.hpp"

#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/file_source.hpp>
#include <sluice/hub/seat.hpp>

#include <gtest/gtest.h>

#include <fstream>

namespace sluice::hub {
namespace {

using namespace test;
using Kind = OutEvent::Kind;

// 61 rows of a real session (iansherr/claude-code-log's test data, ../shared/fixtures/README.md).
const std::filesystem::path FIXTURE =
    std::filesystem::path(SLUICE_FIXTURES_DIR) / "iansherr_claude-code-log"
    / "test_test_data_real_projects_-experiments-ideas_03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl";

struct FileRig {
    FileRig()
        : writer(std::make_shared<Writer>(WRITER_QUEUE_CAPACITY))
        , file(dir.path() / "session.jsonl") {
        std::filesystem::copy_file(FIXTURE, file);
    }

    ~FileRig() { writer->drain(); }

    FileRig(const FileRig&) = delete;
    FileRig& operator=(const FileRig&) = delete;

    std::shared_ptr<Seat> open() {
        auto listing = list_session_file(file);
        EXPECT_TRUE(listing.has_value());
        SeatSpec spec;
        spec.id = "c-session";
        spec.agent = "claude";
        spec.epoch = "e-listed";
        return Seat::open_fed(
            io,
            spec,
            SeatOptions{dir.path() / "index", nullptr, writer, 2, 20ms, Budget{}},
            std::make_unique<FileSource>(file, listing.value_or(ForeignListing{})));
    }

    std::vector<OutEvent> collect(Seat& seat, Subscriber& sub) {
        return on_strand(io, seat, [&] {
            std::vector<OutEvent> out;
            seat.collect(sub, out);
            return out;
        });
    }

    // Collects until an event of `kind` arrives; @return it (or an empty event of kind turn).
    OutEvent wait_for(Seat& seat, Subscriber& sub, Kind kind) {
        OutEvent found;
        found.kind = Kind::turn;
        run_until(io, [&] {
            for (auto& ev : collect(seat, sub)) {
                if (ev.kind == kind) {
                    found = std::move(ev);
                    return true;
                }
            }
            return false;
        });
        return found;
    }

    void append(const boost::json::object& row) const {
        std::ofstream out(file, std::ios::app);
        out << boost::json::serialize(row) << '\n';
    }

    net::io_context io;
    TempDir dir;
    std::shared_ptr<Writer> writer;
    std::filesystem::path file;
};

TEST(FileSource, ItsViewersWaitForTheFileThenStartFromItsWindow) {
    FileRig rig;
    auto seat = rig.open();
    EXPECT_TRUE(seat->foreign());
    EXPECT_FALSE(seat->mirror());
    EXPECT_EQ(seat->summary().source, "claude");
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    auto connected = rig.wait_for(*seat, *sub, Kind::connected);
    ASSERT_EQ(connected.kind, Kind::connected) << "the viewer was never served";
    const auto frames = on_strand(rig.io, *seat, [&] { return seat->window().end(); });
    EXPECT_GT(frames, 0U);
    const auto epoch = on_strand(rig.io, *seat, [&] { return seat->epoch(); });
    EXPECT_NE(epoch, "e-listed"); // numbered by the file's own open, not the listing's guess
    EXPECT_NE(connected.json().find(epoch), std::string::npos);
    // The turns the listing counted are the turns the open found.
    std::ifstream in(rig.file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(seat->summary().turns, count_turns(text));
    EXPECT_TRUE(std::filesystem::exists(rig.dir.path() / "index")); // its index is sluice's own
}

TEST(FileSource, FollowsTheFileAsItGrows) {
    FileRig rig;
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    ASSERT_EQ(rig.wait_for(*seat, *sub, Kind::connected).kind, Kind::connected);
    const auto end = on_strand(rig.io, *seat, [&] { return seat->window().end(); });

    rig.append(assistant_row("written by someone else, later"));
    on_strand(rig.io, *seat, [&] { seat->source_changed(); });
    auto frame = rig.wait_for(*seat, *sub, Kind::frame);
    ASSERT_EQ(frame.kind, Kind::frame) << "the appended row was not followed";
    EXPECT_EQ(frame.seq, end);
    EXPECT_NE(frame.frame->json().find("written by someone else, later"), std::string::npos);
}

TEST(FileSource, ATruncatedFileIsOpenedAgainUnderANewEpoch) {
    FileRig rig;
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    ASSERT_EQ(rig.wait_for(*seat, *sub, Kind::connected).kind, Kind::connected);
    const auto before = on_strand(rig.io, *seat, [&] { return seat->epoch(); });

    {
        std::ofstream out(rig.file, std::ios::trunc); // rewritten from the start
        out << boost::json::serialize(assistant_row("a new beginning")) << '\n';
    }
    on_strand(rig.io, *seat, [&] { seat->source_changed(); });
    auto again = rig.wait_for(*seat, *sub, Kind::connected);
    ASSERT_EQ(again.kind, Kind::connected) << "its viewer was not started again";
    const auto after = on_strand(rig.io, *seat, [&] { return seat->epoch(); });
    EXPECT_NE(after, before);
    EXPECT_NE(again.json().find(after), std::string::npos);
    EXPECT_NE(again.json().find("a new beginning"), std::string::npos);
    EXPECT_EQ(on_strand(rig.io, *seat, [&] { return seat->window().end(); }), 1U);
}

TEST(FileSource, APageAskedBeforeTheFileOpenedWaitsForIt) {
    FileRig rig;
    auto seat = rig.open(); // no viewer: nothing is open yet
    auto page = history_page(rig.io, *seat, std::nullopt, 20);
    ASSERT_TRUE(page.has_value()) << page.error().message;
    EXPECT_NE(page->body->find("\"turns\":[{"), std::string::npos) << *page->body;
}

TEST(FileSource, EverythingWrittenToItsSeatIsRefusedAndTheFileIsNeverWritten) {
    FileRig rig;
    const auto size = std::filesystem::file_size(rig.file);
    auto seat = rig.open();
    auto sub = std::make_shared<Subscriber>();
    on_strand(rig.io, *seat, [&] { seat->attach(sub, std::nullopt); });
    ASSERT_EQ(rig.wait_for(*seat, *sub, Kind::connected).kind, Kind::connected);
    auto sent = on_strand(rig.io, *seat, [&] { return seat->submit("hello"); });
    ASSERT_FALSE(sent.has_value());
    EXPECT_EQ(sent.error().code, make_error_code(errc::conflict));
    EXPECT_EQ(sent.error().message, std::string(FOREIGN_READ_ONLY));
    auto renamed = on_strand(rig.io, *seat, [&] { return seat->rename("mine now"); });
    ASSERT_FALSE(renamed.has_value());
    EXPECT_EQ(renamed.error().code, make_error_code(errc::conflict));
    std::optional<Result<void>> reset;
    on_strand(rig.io, *seat, [&] { seat->reset([&](Result<void> r) { reset.emplace(r); }); });
    ASSERT_TRUE(run_until(rig.io, [&] { return reset.has_value(); }));
    ASSERT_FALSE(reset->has_value());
    EXPECT_EQ(reset->error().code, make_error_code(errc::conflict));
    on_strand(rig.io, *seat, [&] { seat->close(); });
    rig.writer->drain();
    EXPECT_EQ(std::filesystem::file_size(rig.file), size);
}

} // namespace
} // namespace sluice::hub
