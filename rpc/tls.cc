#include "rpc/tls.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace sfs::rpc {
namespace {

Result<std::string> ReadPem(const std::string& path, bool secret) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "TLS file " + path);
  if (secret && (st.st_mode & 077) != 0) {
    return Status::Error(EACCES, "TLS private key " + path + " may be read by others: chmod 600 " +
                                     path);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return Status::Error(EIO, "TLS file " + path + ": read failed");
  if (text.str().find("-----BEGIN") == std::string::npos) {
    return Status::Error(EINVAL, "TLS file " + path + " is not PEM");
  }
  return text.str();
}

Status CheckPair(const TlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    return Status::Error(EINVAL, "a TLS certificate needs its key and the key its certificate");
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(const TlsFiles& files) {
  if (!files.on()) return grpc::InsecureChannelCredentials();
  SFS_RETURN_IF_ERROR(CheckPair(files));
  if (files.ca.empty()) {
    return Status::Error(EINVAL, "TLS needs the CA that signed the OSS's certificate (tls_ca)");
  }
  grpc::SslCredentialsOptions options;
  auto ca = ReadPem(files.ca, false);
  if (!ca.ok()) return ca.status();
  options.pem_root_certs = *ca;
  if (!files.cert.empty()) {
    auto cert = ReadPem(files.cert, false);
    if (!cert.ok()) return cert.status();
    auto key = ReadPem(files.key, true);
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *cert;
    options.pem_private_key = *key;
  }
  return grpc::SslCredentials(options);
}

Result<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const TlsFiles& files) {
  if (!files.on()) return grpc::InsecureServerCredentials();
  SFS_RETURN_IF_ERROR(CheckPair(files));
  if (files.cert.empty()) {
    return Status::Error(EINVAL, "a TLS server needs its certificate and key (--tls-cert, --tls-key)");
  }
  auto cert = ReadPem(files.cert, false);
  if (!cert.ok()) return cert.status();
  auto key = ReadPem(files.key, true);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!files.ca.empty()) {
    auto ca = ReadPem(files.ca, false);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace sfs::rpc
