// Test support: throwaway self-signed certificates made with the openssl CLI.
#include "support/test_certs.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sluice::test {

std::string make_self_signed(
    const std::string& cert_path, const std::string& key_path, const std::string& san) {
    const auto cn = san.substr(san.find(':') + 1, san.find(',') - san.find(':') - 1);
    const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                            "-nodes -days 1 -subj '/CN="
                            + cn + "' -addext 'subjectAltName=" + san + "' -keyout '" + key_path
                            + "' -out '" + cert_path + "' 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) {
        return {};
    }
    std::ifstream in(cert_path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace sluice::test
