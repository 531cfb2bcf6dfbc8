#include "src/common/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace flashjit {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    std::abort();  // allocation failure inside OpenSSL: nothing sensible to continue with
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::Update(const void* data, size_t size) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, size);
}

Sha256Digest Sha256::Finish() {
  Sha256Digest d{};
  unsigned int n = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), d.data(), &n);
  return d;
}

std::string ToHex(const uint8_t* data, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    s[2 * i] = kDigits[data[i] >> 4];
    s[2 * i + 1] = kDigits[data[i] & 15];
  }
  return s;
}

std::string Sha256Hex(const void* data, size_t size) {
  Sha256 h;
  h.Update(data, size);
  Sha256Digest d = h.Finish();
  return ToHex(d.data(), d.size());
}

}  // namespace flashjit
