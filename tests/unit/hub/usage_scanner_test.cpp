// Tests of hub/usage_scanner.hpp: a session's files counted in the background, each read on from
// where it was left, sub-agents toward their parent, a truncated file counted again.
#include "support/files.hpp"
#include "unit/conversation/fixtures.hpp"

#include <sluice/hub/usage_scanner.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sluice::hub {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using test::append_to;

std::string row(const std::string& id, std::int64_t output, bool newline = true) {
    json::object o{
        {"type", "assistant"},
        {"timestamp", "2026-01-02T03:04:05.000Z"},
        {"sessionId", "s1"},
        {"requestId", "req_" + id},
        {"cwd", "/work/p"},
        {"message",
         json::object{
             {"id", id},
             {"model", "claude-haiku-4-5"},
             {"usage", json::object{{"input_tokens", 1}, {"output_tokens", output}}}}}};
    return json::serialize(o) + (newline ? "\n" : "");
}

std::int64_t output_of(const UsageLedger& l, const std::string& seat) {
    for (const auto& r : l.query(UsageGroup::seat)) {
        if (r.key == seat) {
            return r.sums.tokens.output;
        }
    }
    return 0;
}

TEST(UsageScanner, CountsASessionAndItsSubagentsAndReadsOnFromWhereItWasLeft) {
    sluice::test::TempDir dir;
    const fs::path file = fs::path(dir.path()) / "proj" / "s1.jsonl";
    append_to(file, row("m1", 5) + row("m2", 7));
    append_to(fs::path(dir.path()) / "proj" / "s1" / "subagents" / "agent-x.jsonl", row("m3", 11));
    auto ledger = std::make_shared<UsageLedger>();
    UsageScanner scanner(ledger);
    scanner.changed(file);
    scanner.wait_idle();
    EXPECT_EQ(output_of(*ledger, "c-s1"), 23);
    ASSERT_EQ(ledger->query(UsageGroup::project).size(), 1U);
    EXPECT_EQ(ledger->query(UsageGroup::project)[0].key, "/work/p");

    // m1's first row rewritten in place (same length, same file): not read again.
    {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        auto text = row("m1", 9);
        f.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    // m2 streamed on (its final row), a new message, and a last line without its newline.
    append_to(file, row("m2", 70) + row("m4", 100) + row("m5", 1000, false));
    scanner.changed(file);
    scanner.wait_idle();
    EXPECT_EQ(output_of(*ledger, "c-s1"), 5 + 70 + 11 + 100 + 1000);
    append_to(file, "\n" + row("m5", 1000)); // m5's newline, then m5 again: counted once
    scanner.changed(file);
    scanner.wait_idle();
    EXPECT_EQ(output_of(*ledger, "c-s1"), 5 + 70 + 11 + 100 + 1000);
}

TEST(UsageScanner, TakesBackATruncatedSessionAndCountsItAgain) {
    sluice::test::TempDir dir;
    const fs::path file = fs::path(dir.path()) / "proj" / "s2.jsonl";
    append_to(file, row("m1", 5) + row("m2", 7));
    auto ledger = std::make_shared<UsageLedger>();
    UsageScanner scanner(ledger);
    scanner.changed(file);
    scanner.wait_idle();
    EXPECT_EQ(output_of(*ledger, "c-s2"), 12);
    fs::resize_file(file, 0);
    append_to(file, row("m9", 3));
    scanner.changed(file);
    scanner.wait_idle();
    EXPECT_EQ(output_of(*ledger, "c-s2"), 3);
    // Replaced by another file under the same name.
    const auto other = fs::path(dir.path()) / "proj" / "other";
    append_to(other, row("m8", 4) + row("m7", 4) + row("m6", 4));
    fs::rename(other, file);
    scanner.changed(file);
    scanner.wait_idle();
    EXPECT_EQ(output_of(*ledger, "c-s2"), 12);
}

} // namespace
} // namespace sluice::hub
