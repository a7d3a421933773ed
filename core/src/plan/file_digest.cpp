#include "plan/file_digest.hpp"

#include <fstream>
#include <vector>

#include <fmt/format.h>
#if BB_HAVE_OPENSSL
#include <openssl/evp.h>
#endif

namespace bb {

Expected<std::string> sha256_file(const std::filesystem::path& file) {
#if BB_HAVE_OPENSSL
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(fmt::format("{}: cannot read", file.string()));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx);
    return make_error("sha256: OpenSSL could not start a digest");
  }
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx, buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx, digest, &n);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
#else
  (void)file;
  return make_error("sha256 unavailable: built without OpenSSL (libssl-dev)");
#endif
}

}  // namespace bb
