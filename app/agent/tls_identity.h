// The agent's TLS identity: a P-256 key and a self-signed certificate made on
// first start in <store_dir>/identity (the key readable only by the agent's
// user), loaded on every later start. Clients pin the certificate's SHA-256
// fingerprint on first use (docs/agent.md).
#pragma once

#include <string>

#include <QSslCertificate>
#include <QSslKey>

#include "shardscope/core/result.h"

namespace shardscope::app::agent {

struct TlsIdentity {
  QSslKey key;
  QSslCertificate certificate;
  std::string fingerprint;  // "sha256:" + 64 lowercase hex digits of the certificate's DER
  bool created = false;     // made by this start
};

// Loads <dir>/agent.key and <dir>/agent.crt, or makes both when neither
// exists (the folder is created with mode 0700, the key written 0600).
// Errors (Io): only one of them exists, a file does not load, the key is
// readable by others, the folder cannot be made.
[[nodiscard]] core::Result<TlsIdentity> loadOrCreateIdentity(const std::string& dir, const std::string& host_name);

// "sha256:<hex>" of a certificate.
[[nodiscard]] std::string certificateFingerprint(const QSslCertificate& certificate);

}  // namespace shardscope::app::agent
