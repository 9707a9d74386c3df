// The one map from errors to HTTP statuses and error bodies.
#include <sluice/server/errors.hpp>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace {

using namespace sluice;
using namespace sluice::server;

TEST(ErrorMap, EveryErrcHasItsStatusAndName) {
    struct Row {
        errc e;
        unsigned status;
        const char* name;
    };

    const Row rows[] = {
        {errc::bad_request, 400, "bad_request"},
        {errc::unauthorized, 401, "unauthorized"},
        {errc::not_found, 404, "not_found"},
        {errc::conflict, 409, "conflict"},
        {errc::payload_too_large, 413, "payload_too_large"},
        {errc::overloaded, 503, "overloaded"},
        {errc::timed_out, 504, "timed_out"},
        {errc::provider_error, 502, "provider_error"},
        {errc::io_error, 500, "io_error"},
        {errc::corrupt_data, 500, "corrupt_data"},
        {errc::insufficient_storage, 507, "insufficient_storage"},
        {errc::read_only, 409, "read_only"},
    };
    for (const auto& r : rows) {
        const auto ec = make_error_code(r.e);
        EXPECT_EQ(http_status(ec), r.status) << r.name;
        EXPECT_EQ(error_code_name(ec), r.name);
    }
    EXPECT_EQ(http_status(internal_error()), 500U);
    EXPECT_EQ(error_code_name(internal_error()), "internal");
}

TEST(ErrorMap, TheBodyCarriesCodeAndMessage) {
    const auto body =
        boost::json::parse(error_body(make_error_code(errc::not_found), "no such seat: s-1"));
    EXPECT_EQ(body.at("error").at("code").as_string(), "not_found");
    EXPECT_EQ(body.at("error").at("message").as_string(), "no such seat: s-1");
}

} // namespace
