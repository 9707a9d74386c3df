// Message: how a notice reads (message.hpp).
#include "message.hpp"

#include <sluice/push/web_push.hpp>

#include <boost/json.hpp>

#include <chrono>

namespace sluice::push {

namespace json = boost::json;

namespace {

std::string seconds_text(std::chrono::milliseconds d) {
    return std::to_string((d.count() + 500) / 1000) + " s";
}

} // namespace

Message make_message(const hub::Notice& n, const std::string& public_url) {
    Message m;
    m.kind = hub::kind_name(n.kind);
    const std::string who = n.title.empty() ? n.seat : n.title;
    // A test push names no seat: its link is the page's home (the inbox).
    const std::string path = n.seat.empty() ? std::string("/") : "/#/seat/" + n.seat;
    json::object o{{"kind", m.kind}, {"seat", n.seat}, {"title", n.title}, {"tag", n.seat}};
    switch (n.kind) {
    case hub::Notice::Kind::permission:
        m.title = who + ": allow " + n.tool + "?";
        m.text = n.summary;
        m.tags = "lock";
        m.priority = "4";
        m.urgency = "high";
        o["tool"] = n.tool;
        o["summary"] = n.summary;
        o["request_id"] = n.request_id;
        break;
    case hub::Notice::Kind::turn_ended:
        m.title = who + ": turn ended";
        m.text = "The turn ended after " + seconds_text(n.took) + ".";
        m.tags = "white_check_mark";
        m.priority = "3";
        m.urgency = "normal";
        o["took_ms"] = n.took.count();
        break;
    case hub::Notice::Kind::turn_failed:
        m.title = who + ": turn failed";
        m.text = "The turn failed after " + seconds_text(n.took)
                 + (n.summary.empty() ? std::string(".") : ": " + n.summary);
        m.tags = "x";
        m.priority = "4";
        m.urgency = "normal";
        o["took_ms"] = n.took.count();
        o["summary"] = n.summary;
        break;
    case hub::Notice::Kind::degraded:
        m.title = who + ": seat degraded";
        m.text = n.summary;
        m.tags = "warning";
        m.priority = "4";
        m.urgency = "normal";
        o["summary"] = n.summary;
        break;
    case hub::Notice::Kind::budget:
        m.title = who + ": budget 80 % spent";
        m.text = n.summary;
        m.tags = "moneybag";
        m.priority = "4";
        m.urgency = "normal";
        o["summary"] = n.summary;
        break;
    case hub::Notice::Kind::test:
        m.title = "sluice: notifications work";
        m.text = "This browser will be told when a prompt waits or a long turn ends.";
        m.tags = "bell";
        m.priority = "3";
        m.urgency = "normal";
        o["tag"] = "sluice-test";
        break;
    }
    if (!public_url.empty()) {
        std::string base = public_url;
        while (!base.empty() && base.back() == '/') {
            base.pop_back();
        }
        m.click = base + path;
        o["url"] = m.click;
    } else {
        o["url"] = path;
    }
    o["body"] = m.text;
    o["headline"] = m.title;
    for (const char c : n.seat) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                        || c == '-' || c == '_';
        if (ok && m.topic.size() < 32) {
            m.topic += c;
        }
    }
    m.json = json::serialize(o);
    if (m.json.size() > PUSH_MAX_PLAINTEXT) { // a very long title: cut the detail first
        o["summary"] = "";
        o["body"] = "";
        m.json = json::serialize(o);
    }
    return m;
}

} // namespace sluice::push
