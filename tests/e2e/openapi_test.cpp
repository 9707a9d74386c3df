// End-to-end tests of GET /openapi.json against the real hub: the document names every route the
// server answers and no other (both ways), its `security: []` routes are the token-free ones, and
// it passes Redocly's recommended lint.
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace sluice::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

/// The methods the two-way check tries on every path.
constexpr std::array<std::string_view, 5> METHODS{"GET", "POST", "PUT", "PATCH", "DELETE"};

/// How a documented operation answers: a plain response, an SSE stream, a WebSocket upgrade.
enum class Kind : std::uint8_t { plain, sse, websocket };

struct Operation {
    std::string path;   ///< the template, e.g. "/v1/seats/{id}/history"
    std::string method; ///< upper case
    bool open{false};   ///< `security: []`: answered without a token
    Kind kind{Kind::plain};
};

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::toupper(c));
    });
    return s;
}

std::vector<std::string> segments(const std::string& path) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(path);
    while (std::getline(in, cur, '/')) {
        if (!cur.empty()) {
            out.push_back(cur);
        }
    }
    return out;
}

std::string join(const std::vector<std::string>& segs) {
    std::string s;
    for (const auto& p : segs) {
        s += "/" + p;
    }
    return s.empty() ? "/" : s;
}

bool is_param(const std::string& seg) {
    return seg.size() > 2 && seg.front() == '{' && seg.back() == '}';
}

// Whether a concrete path falls under a documented template (a parameter matches any segment).
bool matches(const std::string& tmpl, const std::string& path) {
    const auto t = segments(tmpl);
    const auto p = segments(path);
    if (t.size() != p.size()) {
        return false;
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (!is_param(t[i]) && t[i] != p[i]) {
            return false;
        }
    }
    return true;
}

std::vector<Operation> operations(const json::object& doc) {
    std::vector<Operation> ops;
    for (const auto& item : doc.at("paths").as_object()) {
        for (const auto& entry : item.value().as_object()) {
            const auto method = entry.key();
            if (method == "parameters" || method == "summary" || method == "description") {
                continue;
            }
            Operation op{std::string(item.key()), upper(std::string(method))};
            const auto& o = entry.value().as_object();
            const auto* sec = o.if_contains("security");
            op.open = sec != nullptr && sec->as_array().empty();
            const auto& responses = o.at("responses").as_object();
            if (responses.contains("101")) {
                op.kind = Kind::websocket;
            } else if (const auto* r = responses.if_contains("200"); r != nullptr) {
                const auto* content = r->as_object().if_contains("content");
                if (content != nullptr && content->as_object().contains("text/event-stream")) {
                    op.kind = Kind::sse;
                }
            }
            ops.push_back(std::move(op));
        }
    }
    return ops;
}

/// The document as the hub serves it (without a token), and the hub it came from.
class OpenApiHub {
public:
    OpenApiHub()
        : hub_(hub_args(dir_), true, HubAuth::as_given) {
        token_ = hub_.token();
        auto r = http("GET", hub_.base() + "/openapi.json");
        status_ = r.status;
        content_type_ = r.header("Content-Type");
        if (r.json.is_object()) {
            doc_ = r.json.as_object();
        }
        text_ = r.body;
        seat_ = new_seat(hub_, NewSeat{.name = "openapi", .agent = {}, .token = token_});
    }

    [[nodiscard]] const SluiceProcess& hub() const { return hub_; }

    [[nodiscard]] const json::object& doc() const { return doc_; }

    [[nodiscard]] const std::string& text() const { return text_; }

    [[nodiscard]] unsigned status() const { return status_; }

    [[nodiscard]] const std::string& content_type() const { return content_type_; }

    [[nodiscard]] const std::string& seat() const { return seat_; }

    /// `tmpl` with its parameters filled: the real seat, frame 0, and ids nothing has.
    [[nodiscard]] std::string fill(const std::string& tmpl) const {
        auto segs = segments(tmpl);
        for (auto& s : segs) {
            if (s == "{id}") {
                s = seat_;
            } else if (s == "{seq}") {
                s = "0";
            } else if (is_param(s)) {
                s = "no-such-" + s.substr(1, s.size() - 2);
            }
        }
        return join(segs);
    }

    /// A plain request with the owner token (or none), JSON content type, `{}` for a body.
    [[nodiscard]] Reply
    ask(const std::string& method, const std::string& path, bool token = true) const {
        transport::HttpHeaders h{{"Content-Type", "application/json"}};
        if (token) {
            h.emplace_back("Authorization", "Bearer " + token_);
        }
        return http(method, hub_.base() + path, method == "GET" ? "" : "{}", h);
    }

    /// The status line's code of a stream request (SSE or a WebSocket handshake), read raw: the
    /// stream itself does not end.
    [[nodiscard]] unsigned stream_status(Kind kind, const std::string& path, bool token) const {
        std::string req =
            "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(hub_.port()) + "\r\n";
        if (token) {
            req += "Authorization: Bearer " + token_ + "\r\n";
        }
        if (kind == Kind::websocket) {
            req += "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
        }
        req += "\r\n";
        const auto got = raw_http(hub_.port(), req, 1500ms);
        if (got.size() < 12 || got.compare(0, 5, "HTTP/") != 0) {
            return 0;
        }
        return static_cast<unsigned>(std::stoul(got.substr(9, 3)));
    }

private:
    TempDir dir_;
    SluiceProcess hub_;
    std::string token_;
    unsigned status_{};
    std::string content_type_;
    json::object doc_;
    std::string text_;
    std::string seat_;
};

// The router's own 404 (not a handler's "no such seat"): the route does not exist.
bool no_such_route(const Reply& r) {
    if (r.status != 404 || !r.json.is_object()) {
        return false;
    }
    const auto* err = r.json.as_object().if_contains("error");
    const auto* msg = err != nullptr ? err->as_object().if_contains("message") : nullptr;
    return msg != nullptr && msg->is_string() && msg->get_string().starts_with("no such route");
}

bool no_such_seat(const Reply& r) {
    return r.status == 404 && r.body.find("no such seat") != std::string::npos;
}

std::string describe(const std::string& method, const std::string& path, const Reply& r) {
    return method + " " + path + " answered " + std::to_string(r.status) + ": "
           + r.body.substr(0, 200);
}

// The path segments the server's routing compares against (`parts[i] == "…"`, `action == "…"`,
// `route->second == "…"`) in src/server, so a route added there is probed even before the
// document names it.
std::set<std::string> route_words_in_source() {
    std::set<std::string> words;
    const std::regex compare(
        R"re((?:parts\[\d\]|action|parts\.back\(\)) == "([A-Za-z0-9_.-]+)")re");
    for (const auto* file : {"api.cpp", "seat_api.cpp", "guard.cpp", "http_session.cpp"}) {
        std::ifstream in(std::string(SLUICE_SOURCE_DIR) + "/src/server/" + file);
        std::stringstream text;
        text << in.rdbuf();
        const std::string s = text.str();
        for (std::sregex_iterator it(s.begin(), s.end(), compare), end; it != end; ++it) {
            words.insert((*it)[1].str());
        }
    }
    return words;
}

TEST(OpenApi, DocumentIsServedWithoutATokenAsJson) {
    OpenApiHub h;
    ASSERT_EQ(h.status(), 200U) << h.text().substr(0, 300);
    EXPECT_EQ(h.content_type(), "application/json");
    ASSERT_TRUE(h.doc().contains("openapi")) << h.text().substr(0, 300);
    EXPECT_EQ(std::string_view(h.doc().at("openapi").as_string()), "3.1.0");
    const auto& version = h.doc().at("info").as_object().at("version").as_string();
    EXPECT_FALSE(version.empty());
    EXPECT_EQ(std::string_view(version).find('@'), std::string_view::npos)
        << "info.version is filled at configure time: " << version;
}

TEST(OpenApi, EveryDocumentedOperationIsARouteTheHubAnswers) {
    OpenApiHub h;
    ASSERT_FALSE(h.seat().empty());
    auto ops = operations(h.doc());
    ASSERT_GE(ops.size(), 20U) << "the document lists fewer operations than the hub has";
    // Deletions last: the seat is every other operation's subject.
    std::stable_partition(
        ops.begin(), ops.end(), [](const Operation& o) { return o.method != "DELETE"; });
    for (const auto& op : ops) {
        const auto path = h.fill(op.path);
        SCOPED_TRACE(op.method + " " + op.path + " as " + path);
        if (op.kind != Kind::plain) {
            ASSERT_EQ(op.method, "GET");
            EXPECT_EQ(h.stream_status(op.kind, path, true), op.kind == Kind::sse ? 200U : 101U);
            EXPECT_EQ(h.stream_status(op.kind, path, false), 401U) << "it is not `security: []`";
            continue;
        }
        // Without a token: an open route answers as it does with one, any other refuses (401).
        const auto anonymous = h.ask(op.method, path, false);
        if (op.open) {
            EXPECT_NE(anonymous.status, 401U) << describe(op.method, path, anonymous);
        } else {
            EXPECT_EQ(anonymous.status, 401U)
                << "a route that needs no token must say `security: []`: "
                << describe(op.method, path, anonymous);
        }
        const auto r = h.ask(op.method, path);
        EXPECT_FALSE(no_such_route(r)) << describe(op.method, path, r);
        EXPECT_NE(r.status, 405U) << describe(op.method, path, r);
        EXPECT_LT(r.status, 500U) << describe(op.method, path, r);
    }
}

TEST(OpenApi, MethodsTheDocumentDoesNotNameAreRefused) {
    OpenApiHub h;
    std::map<std::string, std::set<std::string>> documented;
    for (const auto& op : operations(h.doc())) {
        documented[op.path].insert(op.method);
    }
    ASSERT_FALSE(documented.empty());
    for (const auto& [tmpl, methods] : documented) {
        const auto path = h.fill(tmpl);
        for (const auto m : METHODS) {
            const std::string method(m);
            if (methods.contains(method)) {
                continue;
            }
            const auto r = h.ask(method, path);
            EXPECT_TRUE(r.status == 405 || no_such_route(r))
                << "undocumented method: " << describe(method, path, r);
        }
    }
}

TEST(OpenApi, PathsTheDocumentDoesNotNameAreNoSuchRoute) {
    OpenApiHub h;
    std::vector<std::string> templates;
    for (const auto& op : operations(h.doc())) {
        templates.push_back(op.path);
    }
    ASSERT_FALSE(templates.empty());
    auto words = route_words_in_source();
    ASSERT_GE(words.size(), 15U) << "the routing's words were not found in src/server";
    // Names a hub might plausibly answer, and the values a path parameter would take.
    for (const auto* w :
         {"v1",     "v2",      "seats",        "seat",         "tokens", "token",  "version",
          "docs",   "openapi", "openapi.json", "openapi.yaml", "health", "status", "config",
          "agents", "turns",   "transcript",   "window",       "stream", "sse"}) {
        words.insert(w);
    }
    const std::vector<std::string> values{"0", "x", h.seat()};
    // Every prefix of every documented path (filled), the root included.
    std::set<std::string> prefixes{"/"};
    for (const auto& t : templates) {
        auto segs = segments(h.fill(t));
        for (std::size_t n = 0; n <= segs.size(); ++n) {
            prefixes.insert(join({segs.begin(), segs.begin() + static_cast<std::ptrdiff_t>(n)}));
        }
    }
    // One segment below a prefix: every method; two segments: GET (thousands of paths).
    std::set<std::string> one;
    std::set<std::string> two;
    const auto below = [](const std::string& p, const std::string& seg) {
        return p == "/" ? "/" + seg : p + "/" + seg;
    };
    for (const auto& p : prefixes) {
        for (const auto& w : words) {
            one.insert(below(p, w));
            for (const auto& v : {"0", "x"}) { // a parameter's place, before or after a word
                two.insert(below(below(p, w), v));
                two.insert(below(below(p, v), w));
            }
        }
        for (const auto& v : values) {
            one.insert(below(p, v));
        }
    }
    std::vector<std::pair<std::string, std::vector<std::string_view>>> probes;
    for (const auto& p : one) {
        probes.emplace_back(p, std::vector<std::string_view>(METHODS.begin(), METHODS.end()));
    }
    for (const auto& p : two) {
        if (!one.contains(p)) {
            probes.emplace_back(p, std::vector<std::string_view>{"GET"});
        }
    }
    std::size_t probed = 0;
    for (const auto& [path, methods] : probes) {
        if (std::any_of(templates.begin(), templates.end(), [&](const std::string& t) {
                return matches(t, path);
            })) {
            continue;
        }
        // Under another seat than the real one the hub says "no such seat" before it looks at
        // the rest of the path: that is no route either.
        const auto segs = segments(path);
        const bool other_seat =
            segs.size() >= 3 && segs[0] == "v1" && segs[1] == "seats" && segs[2] != h.seat();
        for (const auto m : methods) {
            const std::string method(m);
            const auto r = h.ask(method, path);
            ++probed;
            EXPECT_TRUE(no_such_route(r) || (other_seat && no_such_seat(r)))
                << "the hub answers a path the document does not name: "
                << describe(method, path, r);
        }
    }
    EXPECT_GE(probed, 1000U);
    std::cout << "probed " << probed << " requests on " << probes.size() << " paths\n";
}

TEST(OpenApi, DocumentPassesRedoclyRecommendedLint) {
    const std::string redocly =
        std::string(SLUICE_SOURCE_DIR) + "/tools/redocly/node_modules/.bin/redocly";
    ASSERT_EQ(::access(redocly.c_str(), X_OK), 0)
        << redocly << " is missing: run scripts/install-deps (npm ci in tools/redocly)";
    OpenApiHub h;
    ASSERT_EQ(h.status(), 200U);
    TempDir dir;
    const auto file = dir.file("openapi.json");
    const auto log = dir.file("lint.txt");
    {
        std::ofstream out(file);
        out << h.text();
    }
    const std::string cmd = "REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true '" + redocly
                            + "' lint --extends=recommended '" + file + "' > '" + log + "' 2>&1";
    const int rc = std::system(cmd.c_str()); // NOLINT(concurrency-mt-unsafe): one thread here
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(rc, 0) << text.str();
}

} // namespace
} // namespace sluice::test
