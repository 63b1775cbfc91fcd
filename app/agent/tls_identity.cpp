#include "tls_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <QCryptographicHash>
#include <QFile>

namespace shardscope::app::agent {

namespace {
namespace fs = std::filesystem;

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

core::Error ioError(const std::string& what) { return core::Error{what, core::ErrorKind::Io}; }

std::string bioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

// Writes `text` to a new file with `mode` (refuses to replace one).
core::Status writeNew(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return ioError("cannot create " + path + ": " + std::strerror(errno));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return ioError("cannot write " + path);
  return core::Ok{};
}

// A fresh P-256 key and a certificate for it, valid ten years, self-signed.
core::Result<std::pair<std::string, std::string>> makeKeyAndCertificate(const std::string& host_name) {
  PKey key(EVP_EC_gen("P-256"));
  if (!key) return ioError("cannot generate the agent's key (OpenSSL EVP_EC_gen)");
  X509Ptr cert(X509_new());
  if (!cert) return ioError("cannot allocate a certificate");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1)
    return ioError("cannot draw a random certificate serial (OpenSSL RAND_bytes)");
  serial[0] &= 0x7f;  // a positive serial
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  const std::string cn = "shardscope-agent " + host_name.substr(0, 40);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return ioError("cannot sign the agent's certificate");
  Bio key_out(BIO_new(BIO_s_mem()));
  Bio cert_out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 0 ||
      PEM_write_bio_X509(cert_out.get(), cert.get()) == 0)
    return ioError("cannot write the agent's key and certificate as PEM");
  return std::pair{bioText(key_out.get()), bioText(cert_out.get())};
}

core::Result<QByteArray> readFile(const std::string& path) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly)) return ioError("cannot read " + path + ": " + f.errorString().toStdString());
  return f.readAll();
}
}  // namespace

std::string certificateFingerprint(const QSslCertificate& certificate) {
  return "sha256:" + certificate.digest(QCryptographicHash::Sha256).toHex().toStdString();
}

core::Result<TlsIdentity> loadOrCreateIdentity(const std::string& dir, const std::string& host_name) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return ioError("cannot create " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);
  const std::string key_path = (fs::path(dir) / "agent.key").string();
  const std::string cert_path = (fs::path(dir) / "agent.crt").string();
  const bool has_key = fs::exists(key_path, ec);
  const bool has_cert = fs::exists(cert_path, ec);
  TlsIdentity id;
  if (!has_key && !has_cert) {
    auto made = makeKeyAndCertificate(host_name);
    if (!made) return made.error();
    if (auto s = writeNew(key_path, made->first, 0600); !s) return s.error();
    if (auto s = writeNew(cert_path, made->second, 0644); !s) return s.error();
    id.created = true;
  } else if (has_key != has_cert) {
    return ioError(dir + " holds " + (has_key ? "agent.key but no agent.crt" : "agent.crt but no agent.key") +
                   ": restore the missing file, or remove both to make a new identity (clients will then warn "
                   "that the fingerprint changed)");
  }
  struct stat st {};
  if (::stat(key_path.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
    return ioError(key_path + " is readable by other users (mode 0" +
                   QString::number(st.st_mode & 0777, 8).toStdString() + "): chmod 600 " + key_path);
  auto key_pem = readFile(key_path);
  if (!key_pem) return key_pem.error();
  auto cert_pem = readFile(cert_path);
  if (!cert_pem) return cert_pem.error();
  id.key = QSslKey(*key_pem, QSsl::Ec, QSsl::Pem, QSsl::PrivateKey);
  if (id.key.isNull()) return ioError(key_path + ": not a PEM EC private key");
  const auto certs = QSslCertificate::fromData(*cert_pem, QSsl::Pem);
  if (certs.size() != 1 || certs.front().isNull()) return ioError(cert_path + ": not one PEM certificate");
  id.certificate = certs.front();
  id.fingerprint = certificateFingerprint(id.certificate);
  return id;
}

}  // namespace shardscope::app::agent
