// The hub's figures for /v1/stats and /metrics: one table, two encodings.
#include "stats.hpp"

#include "process_stats.hpp"

#include <sluice/core/relay.hpp>
#include <sluice/core/version.hpp>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string_view>
#include <vector>

namespace sluice::server {

namespace json = boost::json;

namespace {

// One hub-wide figure, named once for both /v1/stats (JSON) and /metrics (Prometheus).
struct Stat {
    const char* json_name;   // key in /v1/stats (relay figures sit under "relay")
    const char* metric_name; // sluice_<name> in /metrics
    const char* type;        // "gauge" | "counter"
    const char* help;
    std::uint64_t value;
    bool relay;
};

std::vector<Stat>
hub_stats(const hub::Hub& seats, const Counters& counters, std::size_t connections) {
    const auto h = seats.stats();
    const auto c = counters.snapshot();
    const auto r = stream_relay_snapshot();
    return {
        {"seats", "seats", "gauge", "Seats hosted.", h.seats, false},
        {"running", "seats_running", "gauge", "Seats with a turn running.", h.running, false},
        {"subscribers", "subscribers", "gauge", "Live subscribers.", h.subscribers, false},
        {"window_frames",
         "window_frames",
         "gauge",
         "Frames held in seat windows.",
         h.window_frames,
         false},
        {"window_bytes",
         "window_bytes",
         "gauge",
         "Wire bytes held in seat windows.",
         h.window_bytes,
         false},
        {"frames_total",
         "frames_total",
         "counter",
         "Frames in every conversation.",
         h.frames_total,
         false},
        {"preview_dropped_bytes",
         "subscriber_preview_dropped_bytes_total",
         "counter",
         "Preview bytes dropped for subscribers (reported as gap).",
         h.preview_dropped_bytes,
         false},
        {"resyncs",
         "subscriber_resyncs_total",
         "counter",
         "Subscribers resynced with connected.",
         h.resyncs,
         false},
        {"transcript_write_errors",
         "transcript_write_errors_total",
         "counter",
         "Failed transcript and metadata writes (each degrades its seat).",
         h.write_errors,
         false},
        {"seats_degraded",
         "seats_degraded",
         "gauge",
         "Seats degraded by a failed write or a read-only data directory.",
         h.degraded,
         false},
        {"subscriber_preview_budget_bytes",
         "subscriber_preview_budget_bytes",
         "gauge",
         "Preview bytes a subscriber's lane may retain (its budget).",
         hub::SUBSCRIBER_PREVIEW_LIMITS.retained_budget,
         false},
        {"subscriber_preview_peak_retained_bytes",
         "subscriber_preview_peak_retained_bytes",
         "gauge",
         "Most preview bytes one subscriber's lane was seen holding (noted when its writer "
         "collects).",
         c.lane_peak_retained,
         false},
        {"subscriber_gap_bytes",
         "subscriber_gap_bytes_total",
         "counter",
         "Preview bytes reported lost to subscribers in gap events (noted when their writers "
         "collect).",
         c.gap_bytes,
         false},
        {"connections", "connections", "gauge", "Open HTTP connections.", connections, false},
        {"requests", "http_requests_total", "counter", "HTTP requests read.", c.requests, false},
        {"connections_rejected",
         "connections_rejected_total",
         "counter",
         "Connections refused over the limit.",
         c.rejected,
         false},
        {"produced_delta_bytes",
         "relay_produced_delta_bytes_total",
         "counter",
         "Preview bytes sent into relays.",
         r.produced_delta_bytes,
         true},
        {"forwarded_delta_bytes",
         "relay_forwarded_delta_bytes_total",
         "counter",
         "Preview bytes handed to relay callers.",
         r.forwarded_delta_bytes,
         true},
        {"dropped_delta_bytes",
         "relay_dropped_delta_bytes_total",
         "counter",
         "Preview bytes dropped by relays.",
         r.dropped_delta_bytes,
         true},
        {"retained_delta_bytes",
         "relay_retained_delta_bytes",
         "gauge",
         "Preview bytes held in relays.",
         r.retained_delta_bytes,
         true},
        {"peak_retained_delta_bytes",
         "relay_peak_retained_delta_bytes",
         "gauge",
         "Highest preview bytes held in relays.",
         r.peak_retained_delta_bytes,
         true},
        {"active_relays", "relay_active", "gauge", "Relays not yet ended.", r.active_relays, true},
    };
}

// One unlabelled metric with its HELP and TYPE lines.
void metric(std::string& out, const char* name, const char* type, const char* help, std::string v) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
    out += name;
    out += ' ';
    out += v;
    out += '\n';
}

// One histogram series: its buckets, +Inf, sum and count; `label` empty or `name="value"`.
void histogram_series(
    std::string& out,
    std::string_view name,
    const std::string& label,
    std::span<const double> bounds,
    const Histogram::Snapshot& snap) {
    const std::string sep = label.empty() ? "" : label + ",";
    const std::string braces = label.empty() ? "" : "{" + label + "}";
    for (std::size_t i = 0; i < bounds.size(); ++i) {
        out.append(name).append("_bucket{").append(sep).append("le=\"");
        out += sample(bounds[i]) + "\"} " + std::to_string(snap.le.at(i)) + '\n';
    }
    out.append(name).append("_bucket{").append(sep).append("le=\"+Inf\"} ");
    out += std::to_string(snap.count) + '\n';
    out.append(name).append("_sum").append(braces) += ' ' + sample(snap.sum_seconds) + '\n';
    out.append(name).append("_count").append(braces) += ' ' + std::to_string(snap.count) + '\n';
}

// The build, the process (Prometheus' standard process_* names) and the turn histogram.
void process_and_turn_metrics(std::string& out, const hub::TurnDurations& turns) {
    out += "# HELP sluice_build_info The version and commit this hub was built from.\n"
           "# TYPE sluice_build_info gauge\nsluice_build_info{version=\"";
    out += label_value(version());
    out += "\",commit=\"";
    out += label_value(commit());
    out += "\"} 1\n";
    const auto p = process_figures();
    if (p.resident_bytes) {
        metric(
            out,
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            std::to_string(*p.resident_bytes));
    }
    if (p.virtual_bytes) {
        metric(
            out,
            "process_virtual_memory_bytes",
            "gauge",
            "Virtual memory size in bytes.",
            std::to_string(*p.virtual_bytes));
    }
    if (p.open_fds) {
        metric(
            out,
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            std::to_string(*p.open_fds));
    }
    if (p.max_fds) {
        metric(
            out,
            "process_max_fds",
            "gauge",
            "Maximum number of open file descriptors.",
            std::to_string(*p.max_fds));
    }
    if (p.start_time_seconds) {
        metric(
            out,
            "process_start_time_seconds",
            "gauge",
            "Start time of the process since unix epoch in seconds.",
            sample(*p.start_time_seconds));
    }
    if (p.cpu_seconds) {
        metric(
            out,
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
            sample(*p.cpu_seconds));
    }
    out += "# HELP sluice_turn_duration_seconds How long turns ran, by how they ended.\n"
           "# TYPE sluice_turn_duration_seconds histogram\n";
    for (const auto outcome : hub::TurnDurations::OUTCOMES) {
        histogram_series(
            out,
            "sluice_turn_duration_seconds",
            std::string("outcome=\"") + hub::TurnDurations::name(outcome) + '"',
            hub::TURN_DURATION_BUCKETS,
            turns.snapshot(outcome));
    }
}

} // namespace

// A label value in Prometheus' text format: backslash, double quote and newline escaped.
std::string label_value(std::string_view v) {
    std::string out;
    for (const char c : v) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

// A float sample value: integers without a fraction, others to 15 significant digits.
std::string sample(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

json::object stats_json(const hub::Hub& seats, const Counters& counters, std::size_t connections) {
    json::object o;
    json::object relay;
    for (const auto& st : hub_stats(seats, counters, connections)) {
        (st.relay ? relay : o)[st.json_name] = st.value;
    }
    o["relay"] = std::move(relay);
    return o;
}

std::string metrics_text(const hub::Hub& seats, const Counters& counters, std::size_t connections) {
    const auto c = counters.snapshot();
    std::string out;
    for (const auto& st : hub_stats(seats, counters, connections)) {
        out += "# HELP sluice_";
        out += st.metric_name;
        out += ' ';
        out += st.help;
        out += "\n# TYPE sluice_";
        out += st.metric_name;
        out += ' ';
        out += st.type;
        out += "\nsluice_";
        out += st.metric_name;
        out += ' ';
        out += std::to_string(st.value);
        out += '\n';
    }
    // Subscribers let go, per reason (they resume by Last-Event-ID).
    out += "# HELP sluice_subscriber_let_go_total Subscribers disconnected to protect the hub, "
           "by reason.\n# TYPE sluice_subscriber_let_go_total counter\n";
    out += "sluice_subscriber_let_go_total{reason=\"write_timeout\"} "
           + std::to_string(c.let_go_write_timeout) + "\n";
    out += "sluice_subscriber_let_go_total{reason=\"lagged\"} " + std::to_string(c.let_go_lagged)
           + "\n";
    out += "# HELP sluice_ws_overloaded_total WebSocket ops answered overloaded.\n"
           "# TYPE sluice_ws_overloaded_total counter\nsluice_ws_overloaded_total "
           + std::to_string(c.ws_overloaded) + "\n";
    out += "# HELP sluice_accept_backoffs_total Accept pauses for want of descriptors.\n"
           "# TYPE sluice_accept_backoffs_total counter\nsluice_accept_backoffs_total "
           + std::to_string(c.accept_backoffs) + "\n";
    out += "# HELP sluice_publish_to_write_seconds From a frame's publish (durable, visible) to "
           "the write that handed it to a subscriber's socket, one observation per batch (its "
           "oldest frame).\n# TYPE sluice_publish_to_write_seconds histogram\n";
    histogram_series(
        out,
        "sluice_publish_to_write_seconds",
        "",
        PUBLISH_TO_WRITE_BUCKETS,
        counters.publish_to_write().snapshot());
    process_and_turn_metrics(out, seats.turn_durations());
    usage_metrics(out, *seats.usage());
    return out;
}

} // namespace sluice::server
