// PartialTurn: previews since the last frame, per block, newest bytes kept.
#include <sluice/core/utf8.hpp>
#include <sluice/hub/partial.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <variant>

namespace sluice::hub {

namespace json = boost::json;

void PartialTurn::add(const StreamEvent& ev) {
    Kind kind{};
    std::string_view tool_id;
    std::string_view payload;
    if (const auto* t = std::get_if<llm::Text>(&ev)) {
        kind = Kind::text;
        payload = t->text;
    } else if (const auto* th = std::get_if<llm::Thinking>(&ev)) {
        kind = Kind::thinking;
        payload = th->text;
    } else if (const auto* u = std::get_if<llm::ToolUseDelta>(&ev)) {
        kind = Kind::tool_input;
        tool_id = u->tool_id;
        payload = u->delta;
    } else {
        return; // tool output and semantic events are not part of the message
    }
    if (payload.empty()) {
        return;
    }
    ++version_;
    if (parts_.empty() || parts_.back().kind != kind || parts_.back().tool_id != tool_id) {
        parts_.push_back(Part{kind, std::string(tool_id), {}});
    }
    parts_.back().bytes.append(payload);
    bytes_ += payload.size();
    trim();
}

void PartialTurn::trim() {
    while (bytes_ > max_ && !parts_.empty()) {
        auto& front = parts_.front();
        const std::size_t over = bytes_ - max_;
        if (over >= front.bytes.size()) {
            bytes_ -= front.bytes.size();
            missing_ += front.bytes.size();
            parts_.pop_front();
            continue;
        }
        // Cut the oldest part's start at a character boundary (never half a character).
        const std::size_t cut = utf8::ceil_boundary(front.bytes, over);
        front.bytes.erase(0, cut);
        bytes_ -= cut;
        missing_ += cut;
        if (front.bytes.empty()) {
            parts_.pop_front();
        }
    }
}

void PartialTurn::clear() noexcept {
    parts_.clear();
    bytes_ = 0;
    missing_ = 0;
    ++version_;
}

std::string PartialTurn::json() const {
    std::string text;
    std::string thinking;
    json::array tools;
    for (const auto& p : parts_) {
        if (p.kind == Kind::text) {
            text += p.bytes;
        } else if (p.kind == Kind::thinking) {
            thinking += p.bytes;
        } else {
            // One entry per tool call, its input pieces joined in order.
            auto* it = std::find_if(tools.begin(), tools.end(), [&](const json::value& v) {
                return v.as_object().at("id").as_string() == p.tool_id;
            });
            if (it == tools.end()) {
                tools.push_back(json::object{{"id", p.tool_id}, {"input", ""}});
                it = std::prev(tools.end());
            }
            auto& input = it->as_object()["input"].as_string();
            input.append(p.bytes);
        }
    }
    json::object o;
    if (!text.empty()) {
        o["text"] = text;
    }
    if (!thinking.empty()) {
        o["thinking"] = thinking;
    }
    o["tools"] = std::move(tools);
    o["missing_bytes"] = missing_;
    return json::serialize(o);
}

} // namespace sluice::hub
