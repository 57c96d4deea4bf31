// stripefs fsck's front: opens an unmounted filesystem (its lock, store and
// labelled OSTs) and runs fsck::Check over it (fsck/fsck.h).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "client/remote_ost.h"
#include "fs/ost_attach.h"
#include "fs/stripefs.h"
#include "fsck/fsck.h"
#include "meta/meta_store.h"

namespace sfs::fs {
namespace {

// How long fsck waits for an OST directory to answer before checking
// without it.
constexpr auto kOstPatience = std::chrono::seconds(10);
constexpr int kOperationalError = 8;  // as e2fsck

int Fail(const Status& status) {
  fprintf(stderr, "stripefs fsck: %s\n", status.ToString().c_str());
  return kOperationalError;
}

// Holds the daemon's mount lock (meta_dir/stripefs.lock) so that no mount
// starts while fsck runs; released when the descriptor closes.
struct LockFile {
  int fd = -1;
  ~LockFile() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

int RunFsck(const FsckOptions& options) {
  // A check changes nothing: a store from before quotas is not counted
  // here (pass 6 reports what a count would store; --repair stores it).
  meta::StoreOptions store_options;
  store_options.count_usage = options.repair;
  auto store = meta::MetaStore::Open(options.meta_dir, store_options);
  if (!store.ok()) return Fail(store.status());
  LockFile lock;
  const std::string lock_path = options.meta_dir + "/stripefs.lock";
  lock.fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock.fd < 0) return Fail(ErrnoStatus(errno, "open " + lock_path));
  if (flock(lock.fd, LOCK_EX | LOCK_NB) != 0) {
    return Fail(Status::Error(EBUSY, options.meta_dir + " is in use by a stripefs daemon"));
  }

  auto identities = ReadOstIdentities(**store);
  if (!identities.ok()) return Fail(identities.status());
  // Local OST directories are opened here (each on a thread of its own);
  // OSTs on OSSs are reached through their servers (listing, looking,
  // cutting and removing objects there), with the filesystem's key.
  std::vector<OstIdentity> local;
  for (const OstIdentity& id : *identities) {
    if (!client::IsOssPath(id.path)) local.push_back(id);
  }
  OpenedOsts opened = OpenOsts(local, kOstPatience);
  auto print = [](const fsck::Finding& finding) {
    printf("%s\n", fsck::FormatFinding(finding).c_str());
    fflush(stdout);
  };
  fsck::OstBackends backends;
  std::vector<fsck::Finding> unopened;
  std::vector<std::unique_ptr<ost::Service>> remote;
  size_t next_local = 0;
  for (size_t i = 0; i < identities->size(); ++i) {
    const OstIdentity& id = (*identities)[i];
    std::string why;
    if (client::IsOssPath(id.path) && options.key_file.empty()) {
      why = "it is on an OSS: check it with --key FILE (the filesystem's key)";
    } else if (client::IsOssPath(id.path)) {
      client::Credentials credentials;
      credentials.key_file = options.key_file;
      credentials.tls = {options.tls_ca, options.tls_cert, options.tls_key};
      auto connected = client::ConnectRemoteOst(static_cast<uint32_t>(i), id.path, id.fs_uuid,
                                                id.ost_uuid, credentials, nullptr, nullptr);
      if (connected.ok() && (*connected)->backend().Available()) {
        backends.push_back(&(*connected)->backend());
        remote.push_back(std::move(connected).value());
        continue;
      }
      why = connected.ok() ? "its OSS did not answer" : connected.status().message();
    } else {
      auto& backend = opened.backends[next_local++];
      if (backend.ok() && (*backend)->Available()) {
        backends.push_back(backend->get());
        continue;
      }
      why = backend.ok() ? "it did not answer within 10 s" : backend.status().message();
    }
    backends.push_back(nullptr);
    unopened.push_back({"OST " + std::to_string(i) + " (" + id.path + ") not checked",
                        fsck::Outcome::kUnrepairable, why});
    print(unopened.back());
  }

  fsck::Options check_options;
  check_options.repair = options.repair;
  auto report = fsck::Check(**store, backends, check_options, print);
  for (auto& late : opened.late) late->Abandon();
  if (!report.ok()) return Fail(report.status());
  report->findings.insert(report->findings.begin(), unopened.begin(), unopened.end());
  printf("stripefs fsck: %llu inodes, %llu entries, %llu objects; %zu problems, %zu repaired, "
         "%zu left\n",
         static_cast<unsigned long long>(report->inodes),
         static_cast<unsigned long long>(report->entries),
         static_cast<unsigned long long>(report->objects), report->found(),
         report->found() - report->left(), report->left());
  return report->ExitCode();
}

}  // namespace sfs::fs
