// Ed25519 signatures over a bundle's manifest, through OpenSSL's EVP interface.
//
// What is signed is the manifest (format, versions, arch, count, creation time and the content
// hash over every row's key and cubin SHA-256), serialised as canonical JSON. Since every row's
// cubin is checked against its SHA-256 and every key against the row's own spec and versions,
// a valid signature covers every byte that can be loaded.
//
// Keys live in PEM files (PKCS#8 private keys, SubjectPublicKeyInfo public keys). A key id is the
// first 16 hex digits of the SHA-256 of the raw 32-byte public key.
#pragma once

#include <flashjit/status.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace flashjit::cache {

struct PublicKey {
  std::string path;
  std::string id;
  std::vector<uint8_t> raw;  // 32 bytes
};

// Loads an Ed25519 public key from a public PEM, or derives it from a private PEM.
Result<PublicKey> LoadPublicKey(const std::string& pem_path);

// Writes a new key pair; the private file is created with mode 0600 and never overwritten.
// Returns the key id.
Result<std::string> GenerateKeyPair(const std::string& private_pem, const std::string& public_pem);

// The bytes that are signed: canonical JSON of `manifest` without its signature fields; empty
// (never verifies) when a field is not valid UTF-8.
std::string SignedMessage(const std::map<std::string, std::string>& manifest);

// Signs `message` with the private key in `private_pem`; returns the hex signature and sets
// `*key_id`.
Result<std::string> SignMessage(const std::string& message, const std::string& private_pem,
                                std::string* key_id);

// True when `signature_hex` is `key`'s valid signature of `message`.
bool VerifySignature(const std::string& message, const std::string& signature_hex,
                     const PublicKey& key);

}  // namespace flashjit::cache
