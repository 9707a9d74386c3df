// Unit tests of hub/journal.hpp: a seat's folder on disk alone — appends, injected write errors (a
// full writer queue, a full disk), the high-water mark, a reset's archive and a crash inside it.
#include "support/small_disk.hpp"
#include "unit/hub/hub_test_support.hpp"

#include <sluice/hub/journal.hpp>

#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

namespace sluice::hub::test {
namespace {

// What the journal told its owner.
struct Recorder final : JournalEvents {
    std::size_t durable{0};                        // frames appended, in all
    std::vector<boost::system::error_code> errors; // every batch's error (none: success)
    int write_failures{0};

    void on_durable(
        std::vector<FramePtr> batch, std::size_t appended, boost::system::error_code ec) override {
        EXPECT_LE(appended, batch.size());
        durable += appended;
        errors.push_back(ec);
    }

    void on_write_failed() override { ++write_failures; }
};

FramePtr row_frame(const std::string& text) {
    return Frame::from_row(assistant_row(text));
}

FramePtr prompt_frame(const std::string& text) {
    return Frame::from_row(boost::json::object{
        {"type", "user"}, {"message", boost::json::object{{"role", "user"}, {"content", text}}}});
}

std::size_t lines_of(const std::filesystem::path& file) {
    const auto text = slurp(file);
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A seat folder with its meta.json, a writer and a journal over it, bound to a recorder.
struct JournalRig {
    explicit JournalRig(
        std::size_t writer_capacity = WRITER_QUEUE_CAPACITY, std::filesystem::path at = {})
        : dir(at.empty() ? tmp.path() / "seat" : std::move(at))
        , writer(std::make_shared<Writer>(writer_capacity)) {
        std::filesystem::create_directories(dir);
        spec.id = "s-1";
        spec.epoch = "e-1";
        spec.name = "test";
        spec.agent = "builtin";
        EXPECT_TRUE(write_meta(dir, spec).has_value());
    }

    std::shared_ptr<Journal> make() {
        auto j = Journal::make(spec.id, strand, writer, dir, std::chrono::milliseconds(50));
        j->bind(events);
        return j;
    }

    // Takes the writer's only slot until `release` (a writer of capacity 1 then refuses).
    void block_writer() {
        ASSERT_TRUE(writer->submit(
            [this] {
                std::unique_lock lock(mu);
                cv.wait(lock, [this] { return released; });
                return boost::system::error_code{};
            },
            strand,
            [](boost::system::error_code) {}));
    }

    void release() {
        {
            std::lock_guard lock(mu);
            released = true;
        }
        cv.notify_all();
    }

    TempDir tmp;
    std::filesystem::path dir;
    net::io_context io;
    Journal::strand_type strand{net::make_strand(io)};
    std::shared_ptr<Writer> writer;
    std::shared_ptr<Recorder> events = std::make_shared<Recorder>();
    SeatSpec spec;
    std::mutex mu;
    std::condition_variable cv;
    bool released{false};
};

TEST(Journal, AppendsInOrderAndSaysWhatIsDurable) {
    JournalRig rig;
    auto j = rig.make();
    auto w = j->open(rig.spec, Budget{});
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_EQ(w->end(), 0U);
    net::post(rig.strand, [&] {
        j->append(prompt_frame("one"));
        j->append(row_frame("two"));
        j->append(row_frame("three"));
        EXPECT_TRUE(j->busy());
    });
    ASSERT_TRUE(run_until(rig.io, [&] { return rig.events->durable == 3; }));
    EXPECT_FALSE(j->busy());
    for (const auto& ec : rig.events->errors) {
        EXPECT_FALSE(ec) << ec.message();
    }
    const auto text = slurp(rig.dir / "transcript.jsonl");
    EXPECT_LT(text.find("one"), text.find("two"));
    EXPECT_LT(text.find("two"), text.find("three"));
    EXPECT_TRUE(std::filesystem::exists(rig.dir / "unsynced")); // published, not yet synced clean
    // A clean sync writes the exact high-water mark and removes the marker.
    net::post(rig.strand, [&] { j->sync(rig.spec, /*clean=*/true); });
    rig.writer->drain();
    ASSERT_TRUE(run_until(rig.io, [&] { return !std::filesystem::exists(rig.dir / "unsynced"); }));
    auto meta = read_meta(rig.dir);
    ASSERT_TRUE(meta);
    EXPECT_EQ(meta->published, 3U);
    EXPECT_FALSE(j->not_writable());
}

TEST(Journal, AFullWriterQueueRefusesTheAppendAndDegradesIt) {
    JournalRig rig(/*writer_capacity=*/1);
    auto j = rig.make();
    ASSERT_TRUE(j->open(rig.spec, Budget{}));
    rig.block_writer();
    net::post(rig.strand, [&] { j->append(prompt_frame("refused")); });
    ASSERT_TRUE(run_until(rig.io, [&] { return !rig.events->errors.empty(); }));
    EXPECT_EQ(rig.events->errors[0], make_error_code(errc::overloaded));
    EXPECT_EQ(rig.events->durable, 0U);
    EXPECT_NE(j->degraded().find("writer queue is full"), std::string::npos) << j->degraded();
    EXPECT_EQ(j->write_errors(), 1U);
    EXPECT_EQ(rig.events->write_failures, 1);
    ASSERT_TRUE(j->not_writable());
    EXPECT_NE(j->not_writable()->message.find("degraded"), std::string::npos);
    rig.release();
    rig.writer->drain();
}

TEST(Journal, AFullDiskDegradesItAndNothingAfterTheFailedFrameIsAppended) {
    TempDir outer;
    sluice::test::SmallDisk disk(outer.path() / "small", "256k");
    if (!disk.ok()) {
        GTEST_SKIP() << "needs root to mount a small tmpfs";
    }
    JournalRig rig(WRITER_QUEUE_CAPACITY, outer.path() / "small" / "seat");
    auto j = rig.make();
    ASSERT_TRUE(j->open(rig.spec, Budget{}));
    net::post(rig.strand, [&] {
        j->append(prompt_frame("fits"));
        j->append(row_frame(std::string(512 * 1024, 'x'))); // twice the disk
        j->append(row_frame("after"));
    });
    ASSERT_TRUE(run_until(rig.io, [&] { return !j->degraded().empty() && !j->busy(); }));
    EXPECT_EQ(rig.events->durable, 1U); // the frame before the failed one, and only it
    ASSERT_FALSE(rig.events->errors.empty());
    EXPECT_EQ(rig.events->errors.back().value(), ENOSPC);
    EXPECT_NE(j->degraded().find("No space left on device"), std::string::npos) << j->degraded();
    ASSERT_TRUE(j->not_writable());
    EXPECT_EQ(j->not_writable()->code, make_error_code(errc::insufficient_storage));
    // A later append is refused too: nothing lands after a failed frame.
    const auto before = rig.events->errors.size();
    net::post(rig.strand, [&] { j->append(row_frame("later")); });
    ASSERT_TRUE(run_until(rig.io, [&] { return rig.events->errors.size() > before; }));
    EXPECT_TRUE(rig.events->errors.back());
    EXPECT_EQ(rig.events->durable, 1U);
    EXPECT_EQ(slurp(rig.dir / "transcript.jsonl").find("later"), std::string::npos);
    rig.writer->drain();
}

TEST(Journal, ATranscriptShorterThanWhatWasPublishedChangesTheEpoch) {
    JournalRig rig;
    {
        auto j = rig.make();
        ASSERT_TRUE(j->open(rig.spec, Budget{}));
        net::post(rig.strand, [&] {
            j->append(prompt_frame("a"));
            j->append(row_frame("b"));
        });
        ASSERT_TRUE(run_until(rig.io, [&] { return rig.events->durable == 2; }));
        rig.writer->drain();
    }
    rig.spec.published = 5; // meta.json says five were published: a seq would name two frames
    ASSERT_TRUE(write_meta(rig.dir, rig.spec));
    auto j = rig.make();
    auto spec = rig.spec;
    auto w = j->open(spec, Budget{});
    ASSERT_TRUE(w);
    EXPECT_NE(spec.epoch, "e-1");
    // The transcript's own count (the two frames, and the row closing the turn they left open).
    EXPECT_EQ(spec.published, lines_of(rig.dir / "transcript.jsonl"));
    EXPECT_GE(spec.published, 2U);
    EXPECT_EQ(read_meta(rig.dir)->epoch, spec.epoch); // persisted before anything is served
    rig.writer->drain();
}

TEST(Journal, ACrashBetweenTheArchiveAndMetaIsFinishedAtOpen) {
    JournalRig rig;
    rig.spec.session_id = "old-session";
    ASSERT_TRUE(write_meta(rig.dir, rig.spec));
    {
        std::ofstream archived(rig.dir / "transcript.e-1.jsonl"); // archived, meta not yet moved
        archived << R"({"type":"user","message":{"role":"user","content":"old"}})" << '\n';
    }
    auto j = rig.make();
    auto spec = rig.spec;
    auto w = j->open(spec, Budget{});
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_NE(spec.epoch, "e-1");
    EXPECT_TRUE(spec.session_id.empty()); // the reset forgets the agent's session
    EXPECT_EQ(w->end(), 0U);
    const auto meta = read_meta(rig.dir);
    ASSERT_TRUE(meta);
    EXPECT_EQ(meta->epoch, spec.epoch);
    rig.writer->drain();
}

TEST(Journal, ArchiveKeepsTheOldTranscriptAndStartsAnEmptyOne) {
    JournalRig rig;
    auto j = rig.make();
    ASSERT_TRUE(j->open(rig.spec, Budget{}));
    net::post(rig.strand, [&] {
        j->append(prompt_frame("before the reset"));
        j->append(row_frame("answer"));
    });
    ASSERT_TRUE(run_until(rig.io, [&] { return rig.events->durable == 2; }));
    auto next = rig.spec;
    next.epoch = "e-2";
    std::optional<boost::system::error_code> done;
    net::post(rig.strand, [&] {
        j->hold(true); // a frame queued now belongs to the new epoch
        j->append(prompt_frame("after the reset"));
        j->archive(
            next, "transcript.e-1.jsonl", [&](boost::system::error_code ec, const std::string&) {
                done = ec;
            });
        j->hold(false);
        j->flush();
    });
    ASSERT_TRUE(run_until(rig.io, [&] { return done.has_value() && rig.events->durable == 3; }));
    EXPECT_FALSE(*done) << done->message();
    EXPECT_EQ(lines_of(rig.dir / "transcript.e-1.jsonl"), 2U);
    const auto fresh = slurp(rig.dir / "transcript.jsonl");
    EXPECT_EQ(lines_of(rig.dir / "transcript.jsonl"), 1U);
    EXPECT_NE(fresh.find("after the reset"), std::string::npos);
    EXPECT_EQ(read_meta(rig.dir)->epoch, "e-2");
    rig.writer->drain();
}

} // namespace
} // namespace sluice::hub::test
