// make_provider: builds the provider a configuration names.
#include <sluice/runtime/anthropic.hpp>
#include <sluice/runtime/openai.hpp>
#include <sluice/runtime/provider.hpp>
#include <sluice/runtime/scripted.hpp>

#include <stdexcept>

namespace sluice::runtime {

std::unique_ptr<Provider> make_provider(const ProviderConfig& config) {
    if (config.kind == "scripted") {
        return make_scripted_provider(config);
    }
    if (config.kind == "anthropic") {
        return make_anthropic_provider(config);
    }
    if (config.kind == "openai") {
        return make_openai_provider(config);
    }
    throw std::invalid_argument(
        "unknown provider '" + config.kind + "' (known: anthropic, openai, scripted)");
}

} // namespace sluice::runtime
