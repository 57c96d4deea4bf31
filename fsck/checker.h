// Internal to fsck/: the state of one fsck run, shared by the namespace
// passes (namespace_check.cc) and the object passes (object_check.cc).
// Single-threaded: one Checker per run, used by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fsck/fsck.h"
#include "meta/meta_store.h"

namespace sfs::fsck {

class Checker {
 public:
  Checker(meta::MetaStore& store, const OstBackends& osts, const Options& options,
          const std::function<void(const Finding&)>& on_finding)
      : store_(store), osts_(osts), options_(options), on_finding_(on_finding) {}

  // The passes, in the order Check runs them (fsck.h). Each returns an
  // error only when the store cannot be read.
  Status Load();
  void CheckEntries();
  void CheckStrayRecords();
  void CheckReachability();
  void CheckLinkCounts();
  void CheckObjects();
  void CheckIdMarks();
  // Quota usage against a count of every inode as it is now (after the
  // repairs above, which change what is counted). Skipped while an inode
  // record is unreadable (reported by Load): it counts for someone.
  Status CheckUsage();

  Report TakeReport() { return std::move(report_); }

 private:
  struct Name {
    uint64_t parent = 0;
    std::string name;
  };

  // Reports a problem that `fix` repairs; `done` says what the repair does.
  // With repair off the finding only says what it would do.
  void Repairable(const std::string& text, const std::string& done,
                  const std::function<Status()>& fix);
  // Reports a problem that fsck cannot repair, and why.
  void Unrepairable(const std::string& text, const std::string& why);
  void Emit(Finding finding);

  // The directory unreachable inodes are linked into, created under the
  // root when missing. 0 if it could not be made (the error is reported).
  uint64_t LostAndFound();
  // Frees the objects of unlinked inode `ino` and then its records.
  Status Reclaim(uint64_t ino);

  void SeeIno(uint64_t ino) { max_ino_ = std::max(max_ino_, ino); }
  void SeeObject(uint64_t id) { max_obj_ = std::max(max_obj_, id); }

  meta::MetaStore& store_;
  const OstBackends& osts_;
  const Options options_;
  const std::function<void(const Finding&)>& on_finding_;
  Report report_;

  std::map<uint64_t, meta::Inode> inodes_;  // decodable inode records
  std::set<uint64_t> unreadable_;           // inode records that do not decode
  struct RawEntry {
    uint64_t parent = 0;
    std::string name;
    Result<meta::DirEntry> entry;
  };
  std::vector<RawEntry> raw_entries_;
  std::map<uint64_t, std::string> layouts_;
  std::set<uint64_t> xattr_owners_;
  std::set<uint64_t> orphan_marks_;
  meta::MetaStore::IdMarks marks_;

  // After CheckEntries: the names each inode has (valid entries only), and
  // how many subdirectories each directory holds.
  std::map<uint64_t, std::vector<Name>> names_;
  std::map<uint64_t, uint32_t> subdirs_;
  // Unlinked files whose records fsck erased (their objects are no longer
  // anyone's) or that are still waiting for their objects to be freed.
  std::set<uint64_t> reclaimed_;
  std::set<uint64_t> unlinked_;
  uint64_t lost_and_found_ = 0;

  uint64_t max_ino_ = 0;
  uint64_t max_obj_ = 0;
};

}  // namespace sfs::fsck
