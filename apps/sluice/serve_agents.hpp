// The agents `serve` can run: the seats' agent factory (builtin, process, claude in a folder of
// the workspace root) and the list of agent kinds GET /v1/agents shows.
#pragma once

#include "serve_options.hpp"

#include <sluice/hub/seat.hpp>
#include <sluice/server/server.hpp>

#include <filesystem>
#include <memory>
#include <vector>

namespace sluice::app {

/// The workspace root claude seats' cwd lies in (made if missing): --workspace-root, else the
/// data dir's `workspaces/`; canonical.
[[nodiscard]] std::filesystem::path workspace_root(const ServeOptions& o);

/// The agent kinds a seat may be created with on this hub, and why one cannot (GET /v1/agents).
[[nodiscard]] std::vector<server::AgentKind> agent_kinds(const ServeOptions& o);

/// The seats' agent factory: a builtin agent, the --agent-cmd process, or Claude Code in a
/// folder of the workspace root. A missing flag or a bad setting is a reason (a create is
/// refused, a restored seat is unavailable), never an exception. Budgets: a claude seat gets
/// `--max-budget-usd` with what `limits` leaves it when made; a builtin seat's turns ask
/// `limits` as they start and price their usage from `prices`.
[[nodiscard]] hub::AgentFactory agent_factory(
    const ServeOptions& o,
    std::shared_ptr<hub::SpendLimits> limits,
    std::shared_ptr<const hub::PriceTable> prices);

} // namespace sluice::app
