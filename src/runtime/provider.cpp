// make_provider: builds the provider a configuration names.
#include <sluice/runtime/provider.hpp>
#include <sluice/runtime/scripted.hpp>

#include <stdexcept>

namespace sluice::runtime {

std::unique_ptr<Provider> make_provider(const ProviderConfig& config) {
    if (config.kind == "scripted") {
        return make_scripted_provider(config);
    }
    if (config.kind == "anthropic" || config.kind == "openai") {
        throw std::invalid_argument("provider '" + config.kind + "' is not built yet");
    }
    throw std::invalid_argument(
        "unknown provider '" + config.kind + "' (known: anthropic, openai, scripted)");
}

} // namespace sluice::runtime
