// `sluice rename|set`: a seat's name and budget, and a claude seat's permission mode and model,
// through PATCH /v1/seats/{id} (the running claude is asked; its refusal is the error).
#include "client.hpp"
#include "commands.hpp"

#include <boost/json.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace sluice::app::client {

using app::on_selected;

namespace json = boost::json;

namespace {

// PATCH `body` on `seat`; prints what the hub answers the seat now is. @return the exit status.
int patch(const ClientOptions& o, const std::string& seat, const json::object& body) {
    auto v = call(o, "PATCH", "/v1/seats/" + seat, json::serialize(body));
    if (!v) {
        return 1;
    }
    const auto& s = v->as_object();
    const auto str = [&s](const char* k) {
        const auto* f = s.if_contains(k);
        return f != nullptr && f->is_string() ? std::string(f->get_string()) : std::string();
    };
    std::printf("%s: %s", str("id").c_str(), str("name").c_str());
    if (str("agent") == "claude" || str("agent") == "codex") {
        const auto mode = str("permission_mode");
        const auto model = str("model");
        std::printf(
            " · mode %s · model %s",
            mode.empty() ? "default" : mode.c_str(),
            model.empty() ? "default" : model.c_str());
    }
    if (const auto* b = s.if_contains("budget_usd"); b != nullptr && b->is_number()) {
        const auto* spent = s.if_contains("spent_usd");
        std::printf(
            " · budget $%.2f (spent $%.2f)",
            b->to_number<double>(),
            spent != nullptr && spent->is_number() ? spent->to_number<double>() : 0.0);
    }
    std::printf("\n");
    return 0;
}

} // namespace

void add_manage_commands(
    CLI::App& app,
    const std::shared_ptr<ClientOptions>& o,
    const std::function<void(CLI::App*)>& common) {
    auto* rename = app.add_subcommand("rename", "Rename a seat");
    common(rename);
    auto rseat = std::make_shared<std::string>();
    auto name = std::make_shared<std::string>();
    rename->add_option("seat", *rseat, "seat id")->required();
    rename->add_option("name", *name, "its new name")->required();
    on_selected(rename, [o, rseat, name] {
        return patch(*o, *rseat, json::object{{"name", *name}});
    });

    auto* set = app.add_subcommand(
        "set",
        "Change a seat's budget, or a claude seat's permission mode or model (the running claude "
        "is asked; \"default\" returns to Claude Code's own)");
    common(set);
    auto sseat = std::make_shared<std::string>();
    auto mode = std::make_shared<std::string>();
    auto model = std::make_shared<std::string>();
    set->add_option("seat", *sseat, "seat id")->required();
    set->add_option(
        "--mode", *mode, "permission mode: default, acceptEdits, plan, bypassPermissions, ...");
    set->add_option("--model", *model, "model id, or default");
    auto budget = std::make_shared<std::string>();
    set->add_option(
           "--budget-usd",
           *budget,
           "what the seat may spend in all, in USD (\"none\": no budget of its own)")
        ->type_name("USD|none");
    on_selected(set, [o, sseat, mode, model, budget] {
        json::object body;
        if (*budget == "none") {
            body["budget_usd"] = nullptr;
        } else if (!budget->empty()) {
            char* end = nullptr;
            const double usd = std::strtod(budget->c_str(), &end);
            if (end == budget->c_str() || *end != '\0' || !(usd >= 0)) {
                std::fprintf(stderr, "sluice set: --budget-usd takes an amount (2.50) or none\n");
                return 2;
            }
            body["budget_usd"] = usd;
        }
        if (!mode->empty()) {
            body["permission_mode"] = *mode;
        }
        if (!model->empty()) {
            body["model"] = *model;
        }
        if (body.empty()) {
            std::fprintf(stderr, "sluice set: give --mode, --model or --budget-usd\n");
            return 2;
        }
        return patch(*o, *sseat, body);
    });
}

} // namespace sluice::app::client
