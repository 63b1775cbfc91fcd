// Run › Connections: the agents this desktop knows (docs/desktop/remote.md).
// Add / Edit / Remove an agent (address, label, a token file or a token that
// is remembered in a 0600 file), Connect, Disconnect, Forget Fingerprint.
// A first connection asks whether to trust the agent's SHA-256 fingerprint
// (compare it with what the agent printed at start); a pinned fingerprint
// that changed is refused by the client and said here in a critical box with
// both fingerprints, the known_agents file and line, and what to do. A
// connected agent's description (hosts, GPUs, cluster, launcher, modes,
// limits) and its jobs are shown. The connections belong to RemoteAgents
// (the main window's): closing the dialog keeps them.
#pragma once

#include <QDialog>
#include <QPointer>
#include <QString>

#include "remote_agents.h"

class QLabel;
class QListWidget;
class QMessageBox;
class QPushButton;
class QTableWidget;
class QTextBrowser;

namespace shardscope::app {

class ConnectionsDialog : public QDialog {
  Q_OBJECT

 public:
  explicit ConnectionsDialog(RemoteAgents* agents, QWidget* parent = nullptr);

  // Without dialogs (the buttons ask first). saveAgent adds or replaces the
  // agent of that address; a non-empty `token` is remembered (0600 file) when
  // `remember`, else kept for this session only.
  [[nodiscard]] core::Status saveAgent(SavedAgent agent, const QString& token = {}, bool remember = true);
  void removeAgent(const QString& address);
  void selectAgent(const QString& address);
  [[nodiscard]] QString selectedAddress() const;
  void connectSelected();
  void disconnectSelected();
  [[nodiscard]] core::Result<bool> forgetSelectedFingerprint();

  // Tests answer the trust question without the box.
  enum class TrustAnswer { Ask, Trust, Refuse };
  void setTrustAnswer(TrustAnswer answer) { trust_answer_ = answer; }

  [[nodiscard]] QListWidget* agentList() const { return list_; }
  [[nodiscard]] QTextBrowser* descriptionView() const { return description_; }
  [[nodiscard]] QTableWidget* jobsTable() const { return jobs_; }
  [[nodiscard]] QLabel* stateLabel() const { return state_; }
  // The box of the last failure or trust question, while it is open.
  [[nodiscard]] QMessageBox* messageBox() const { return box_; }

 signals:
  void trustAsked(const QString& address, const QString& fingerprint);

 private:
  void reload();
  void showAgent();
  void updateButtons();
  void onAdd();
  void onEdit();
  void onRemove();
  void onForget();
  void askTrust(const QString& address, const QString& fingerprint);
  void showFailure(const QString& address, const QString& message);
  void showJobs(const QString& address);
  [[nodiscard]] QString changedFingerprintHtml(const QString& address) const;

  RemoteAgents* agents_;
  QList<SavedAgent> saved_;
  QListWidget* list_;
  QLabel* state_;
  QTextBrowser* description_;
  QLabel* jobs_title_;
  QTableWidget* jobs_;
  QPushButton* add_;
  QPushButton* edit_;
  QPushButton* remove_;
  QPushButton* connect_;
  QPushButton* disconnect_;
  QPushButton* forget_;
  QPushButton* refresh_jobs_;
  QPointer<QMessageBox> box_;
  TrustAnswer trust_answer_ = TrustAnswer::Ask;
};

}  // namespace shardscope::app
