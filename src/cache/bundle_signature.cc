#include "src/cache/bundle_signature.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "src/common/sha256.h"

namespace flashjit::cache {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct FileClose {
  void operator()(FILE* f) const { std::fclose(f); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

constexpr size_t kSignatureBytes = 64;

std::string KeyId(const std::vector<uint8_t>& raw) {
  return Sha256Hex(raw.data(), raw.size()).substr(0, 16);
}

Result<std::vector<uint8_t>> RawPublic(EVP_PKEY* pkey, const std::string& path) {
  if (EVP_PKEY_id(pkey) != EVP_PKEY_ED25519)
    return Status::InvalidArgument(
        fmt::format("{}: not an Ed25519 key; create one with `flashjit bundle keygen`", path));
  size_t n = 32;
  std::vector<uint8_t> raw(n);
  if (EVP_PKEY_get_raw_public_key(pkey, raw.data(), &n) != 1 || n != 32)
    return Status::Internal(fmt::format("{}: cannot read the raw public key", path));
  return raw;
}

// Reads a private key, or with `public_only` a public key (falling back to a private one).
Result<Pkey> ReadPem(const std::string& path, bool public_only) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<FILE, FileClose> f(std::fopen(path.c_str(), "rb"));
    if (!f) return Status::NotFound(fmt::format("cannot read key file {}", path));
    EVP_PKEY* k = (public_only && attempt == 0)
                      ? PEM_read_PUBKEY(f.get(), nullptr, nullptr, nullptr)
                      : PEM_read_PrivateKey(f.get(), nullptr, nullptr, nullptr);
    if (k) return Pkey(k);
    if (!public_only) break;
  }
  return Status::InvalidArgument(fmt::format(
      "{}: not a PEM {} key", path, public_only ? "Ed25519 public (or private)" : "private"));
}

std::string Hex(const uint8_t* p, size_t n) { return ToHex(p, n); }

bool FromHex(const std::string& hex, std::vector<uint8_t>* out) {
  if (hex.size() % 2) return false;
  out->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto nib = [](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int hi = nib(hex[i]), lo = nib(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  return true;
}

}  // namespace

Result<PublicKey> LoadPublicKey(const std::string& pem_path) {
  FLASHJIT_ASSIGN_OR_RETURN(Pkey pkey, ReadPem(pem_path, true));
  FLASHJIT_ASSIGN_OR_RETURN(auto raw, RawPublic(pkey.get(), pem_path));
  return PublicKey{pem_path, KeyId(raw), raw};
}

Result<std::string> GenerateKeyPair(const std::string& private_pem, const std::string& public_pem) {
  EVP_PKEY* raw_key = nullptr;
  {
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
    bool ok = ctx && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &raw_key) == 1;
    EVP_PKEY_CTX_free(ctx);
    if (!ok) return Status::Internal("OpenSSL could not generate an Ed25519 key");
  }
  Pkey pkey(raw_key);
  int fd = open(private_pem.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::IOError(fmt::format("cannot create {} (it must not exist yet): {}", private_pem,
                                       std::strerror(errno)));
  {
    std::unique_ptr<FILE, FileClose> f(fdopen(fd, "wb"));
    if (!f || PEM_write_PrivateKey(f.get(), pkey.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
      return Status::IOError(fmt::format("cannot write {}", private_pem));
  }
  {
    std::unique_ptr<FILE, FileClose> f(std::fopen(public_pem.c_str(), "wb"));
    if (!f || PEM_write_PUBKEY(f.get(), pkey.get()) != 1)
      return Status::IOError(fmt::format("cannot write {}", public_pem));
  }
  FLASHJIT_ASSIGN_OR_RETURN(auto raw, RawPublic(pkey.get(), public_pem));
  return KeyId(raw);
}

std::string SignedMessage(const std::map<std::string, std::string>& manifest) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : manifest)
    if (k != "signature" && k != "signer") j[k] = v;
  try {
    return "flashjit-bundle-signature-1\n" + j.dump();
  } catch (const nlohmann::json::exception&) {
    return "";  // a manifest that is not valid UTF-8 has no valid signature
  }
}

Result<std::string> SignMessage(const std::string& message, const std::string& private_pem,
                                std::string* key_id) {
  FLASHJIT_ASSIGN_OR_RETURN(Pkey pkey, ReadPem(private_pem, false));
  FLASHJIT_ASSIGN_OR_RETURN(auto raw, RawPublic(pkey.get(), private_pem));
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  uint8_t sig[kSignatureBytes];
  size_t n = sizeof(sig);
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &n, reinterpret_cast<const uint8_t*>(message.data()),
                     message.size()) != 1 ||
      n != kSignatureBytes)
    return Status::Internal(fmt::format("OpenSSL could not sign with {}", private_pem));
  *key_id = KeyId(raw);
  return Hex(sig, n);
}

bool VerifySignature(const std::string& message, const std::string& signature_hex,
                     const PublicKey& key) {
  if (message.empty()) return false;
  std::vector<uint8_t> sig;
  if (!FromHex(signature_hex, &sig) || sig.size() != kSignatureBytes || key.raw.size() != 32)
    return false;
  Pkey pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.raw.data(), 32));
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!pkey || !ctx) return false;
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1) return false;
  return EVP_DigestVerify(ctx.get(), sig.data(), sig.size(),
                          reinterpret_cast<const uint8_t*>(message.data()), message.size()) == 1;
}

}  // namespace flashjit::cache
