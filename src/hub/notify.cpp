// Notices of events that need a person (hub/notify.hpp).
#include <sluice/core/utf8.hpp>
#include <sluice/hub/notify.hpp>

#include <boost/json.hpp>

namespace sluice::hub {

const char* kind_name(Notice::Kind k) noexcept {
    switch (k) {
    case Notice::Kind::permission:
        return "permission";
    case Notice::Kind::turn_ended:
        return "turn_ended";
    case Notice::Kind::turn_failed:
        return "turn_failed";
    case Notice::Kind::degraded:
        return "degraded";
    case Notice::Kind::test:
        return "test";
    case Notice::Kind::budget:
        return "budget";
    }
    return "permission";
}

Notice permission_notice(const runtime::PermissionRequest& ask) {
    Notice n;
    n.kind = Notice::Kind::permission;
    n.tool = ask.tool_name;
    n.request_id = ask.request_id;
    std::string text;
    if (const auto* o = ask.input.if_object()) {
        for (const char* key : {"command", "file_path", "url", "path", "pattern"}) {
            if (const auto* v = o->if_contains(key); v != nullptr && v->is_string()) {
                text = std::string(v->get_string());
                break;
            }
        }
    }
    if (text.empty() && !ask.input.is_null()) {
        text = boost::json::serialize(ask.input);
    }
    if (text.size() > NOTICE_SUMMARY_MAX_BYTES) {
        text.resize(utf8::floor_boundary(text, NOTICE_SUMMARY_MAX_BYTES - 3));
        text += "...";
    }
    n.summary = std::move(text);
    return n;
}

} // namespace sluice::hub
