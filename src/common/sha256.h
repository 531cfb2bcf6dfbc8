// SHA-256 through OpenSSL's EVP interface.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace flashjit {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(const void* data, size_t size);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  Sha256Digest Finish();

 private:
  void* ctx_;  // EVP_MD_CTX*
};

std::string Sha256Hex(const void* data, size_t size);
inline std::string Sha256Hex(std::string_view s) { return Sha256Hex(s.data(), s.size()); }
std::string ToHex(const uint8_t* data, size_t size);

}  // namespace flashjit
