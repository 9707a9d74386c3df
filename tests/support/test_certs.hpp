// Test support: throwaway self-signed certificates made with the openssl CLI.
#pragma once

#include <string>

namespace sluice::test {

/// Makes a self-signed certificate (its own CA: trusting it is trusting its issuer) for `san`
/// (e.g. "IP:127.0.0.1,DNS:localhost"), valid one day, EC P-256, written to `cert_path` and
/// `key_path`. @return the certificate's PEM, empty when openssl failed.
std::string
make_self_signed(const std::string& cert_path, const std::string& key_path, const std::string& san);

} // namespace sluice::test
