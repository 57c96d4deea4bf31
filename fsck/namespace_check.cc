// fsck's namespace passes: records, entries, reachability, link counts.
#include <fmt/format.h>
#include <sys/stat.h>

#include "fsck/checker.h"
#include "layout/layout.h"

namespace sfs::fsck {
namespace {

constexpr const char* kLostAndFound = "lost+found";

const char* TypeName(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "directory";
    case S_IFREG: return "file";
    case S_IFLNK: return "symlink";
    default: return "special file";
  }
}

}  // namespace

std::string FormatFinding(const Finding& finding) {
  switch (finding.outcome) {
    case Outcome::kFound: return "fsck: " + finding.text + " (--repair would " + finding.repair + ")";
    case Outcome::kRepaired: return "fsck: " + finding.text + ": repaired: " + finding.repair;
    case Outcome::kUnrepairable: return "fsck: " + finding.text + ": cannot repair: " + finding.repair;
  }
  return "fsck: " + finding.text;
}

size_t Report::left() const {
  size_t left = 0;
  for (const Finding& finding : findings) left += finding.outcome != Outcome::kRepaired;
  return left;
}

int Report::ExitCode() const {
  if (findings.empty()) return 0;
  return left() == 0 ? 1 : 4;
}

void Checker::Emit(Finding finding) {
  on_finding_(finding);
  report_.findings.push_back(std::move(finding));
}

void Checker::Repairable(const std::string& text, const std::string& done,
                         const std::function<Status()>& fix) {
  if (!options_.repair) return Emit({text, Outcome::kFound, done});
  Status fixed = fix();
  if (fixed.ok()) return Emit({text, Outcome::kRepaired, done});
  Emit({text, Outcome::kUnrepairable, "tried to " + done + ": " + fixed.ToString()});
}

void Checker::Unrepairable(const std::string& text, const std::string& why) {
  Emit({text, Outcome::kUnrepairable, why});
}

Status Checker::Load() {
  Status s = store_.ScanInodes([&](uint64_t ino, const Result<meta::Inode>& inode) {
    SeeIno(ino);
    if (inode.ok()) {
      inodes_.emplace(ino, *inode);
    } else {
      unreadable_.insert(ino);
    }
  });
  SFS_RETURN_IF_ERROR(s);
  s = store_.ScanDirents([&](uint64_t parent, const std::string& name,
                             const Result<meta::DirEntry>& entry) {
    raw_entries_.push_back({parent, name, entry});
  });
  SFS_RETURN_IF_ERROR(s);
  s = store_.ScanRecords(meta::MetaStore::Record::kLayout,
                         [&](uint64_t ino, std::string_view blob) { layouts_.emplace(ino, blob); });
  SFS_RETURN_IF_ERROR(s);
  s = store_.ScanRecords(meta::MetaStore::Record::kXattr,
                         [&](uint64_t ino, std::string_view) { xattr_owners_.insert(ino); });
  SFS_RETURN_IF_ERROR(s);
  s = store_.ScanRecords(meta::MetaStore::Record::kOrphanMark,
                         [&](uint64_t ino, std::string_view) { orphan_marks_.insert(ino); });
  SFS_RETURN_IF_ERROR(s);
  auto marks = store_.StoredIdMarks();
  SFS_RETURN_IF_ERROR(marks);
  marks_ = *marks;
  report_.inodes = inodes_.size() + unreadable_.size();
  report_.entries = raw_entries_.size();

  for (uint64_t ino : unreadable_) {
    Unrepairable(fmt::format("inode {}: record unreadable", ino),
                 "its names, layout and objects are kept for recovery by hand");
  }
  if (inodes_.count(meta::kRootIno) == 0 && unreadable_.count(meta::kRootIno) == 0) {
    meta::Inode root;
    root.ino = meta::kRootIno;
    root.mode = S_IFDIR | 0755;
    root.nlink = 2;
    root.parent = meta::kRootIno;
    root.atime = root.mtime = root.ctime = meta::Timestamp::Now();
    Repairable("root directory missing", "create an empty root (uid 0, mode 0755)",
               [&] { return store_.RepairInode(root); });
    if (options_.repair) inodes_.emplace(meta::kRootIno, root);
  }
  return Status::Ok();
}

void Checker::CheckEntries() {
  for (const RawEntry& raw : raw_entries_) {
    const std::string where = fmt::format("entry '{}' of directory {}", raw.name, raw.parent);
    auto erase = [&] { return store_.RepairDirent(raw.parent, raw.name, std::nullopt); };
    if (!raw.entry.ok()) {
      Repairable(where + ": unreadable", "remove the entry", erase);
      continue;
    }
    const meta::DirEntry& entry = *raw.entry;
    SeeIno(entry.ino);
    // Around an unreadable record, keep what is known: a readable child of
    // an unreadable directory still has this name, and an unreadable
    // subdirectory still counts in its parent's links.
    if (unreadable_.count(entry.ino) != 0) {
      if (S_ISDIR(entry.mode)) subdirs_[raw.parent]++;
      continue;
    }
    if (unreadable_.count(raw.parent) != 0) {
      if (inodes_.count(entry.ino) != 0) names_[entry.ino].push_back({raw.parent, raw.name});
      continue;
    }
    auto parent = inodes_.find(raw.parent);
    if (parent == inodes_.end()) {
      Repairable(where + ": the directory does not exist", "remove the entry", erase);
      continue;
    }
    if (!S_ISDIR(parent->second.mode)) {
      Repairable(where + ": " + std::to_string(raw.parent) + " is not a directory",
                 "remove the entry", erase);
      continue;
    }
    auto child = inodes_.find(entry.ino);
    if (child == inodes_.end() || entry.ino == meta::kRootIno) {
      Repairable(fmt::format("{}: names inode {}, which does not exist", where, entry.ino),
                 "remove the entry", erase);
      continue;
    }
    const uint32_t type = child->second.mode & S_IFMT;
    if (S_ISDIR(type) && !names_[entry.ino].empty()) {
      const Name& first = names_[entry.ino].front();
      Repairable(fmt::format("{}: a second name of directory {} (first: '{}' in {})", where,
                             entry.ino, first.name, first.parent),
                 "remove the second name", erase);
      continue;
    }
    if (entry.mode != type) {
      Repairable(fmt::format("{}: says {}, inode {} is a {}", where, TypeName(entry.mode),
                             entry.ino, TypeName(type)),
                 "correct the entry's type", [&] {
                   return store_.RepairDirent(raw.parent, raw.name,
                                              meta::DirEntry{raw.name, entry.ino, type});
                 });
    }
    names_[entry.ino].push_back({raw.parent, raw.name});
    if (S_ISDIR(type)) subdirs_[raw.parent]++;
  }
}

void Checker::CheckStrayRecords() {
  std::set<uint64_t> owners = orphan_marks_;
  owners.insert(xattr_owners_.begin(), xattr_owners_.end());
  for (const auto& [ino, blob] : layouts_) owners.insert(ino);
  for (uint64_t ino : owners) {
    SeeIno(ino);
    if (inodes_.count(ino) != 0 || unreadable_.count(ino) != 0) continue;
    std::string what;
    if (layouts_.count(ino) != 0) what += " layout";
    if (xattr_owners_.count(ino) != 0) what += " xattrs";
    if (orphan_marks_.count(ino) != 0) what += " orphan-mark";
    Repairable(fmt::format("inode {} does not exist but has records:{}", ino, what),
               "erase the records (objects they name are freed as orphans)", [&] {
                 Status erased = store_.EraseRecords(ino);
                 if (erased.ok()) layouts_.erase(ino);
                 return erased;
               });
  }
  // Deleting an inode whose record says it never had extended attributes
  // does not look for them, so such records would outlive it.
  for (uint64_t ino : xattr_owners_) {
    const auto found = inodes_.find(ino);
    if (found == inodes_.end() || found->second.may_have_xattrs) continue;
    meta::Inode& inode = found->second;
    Repairable(fmt::format("inode {}: has extended attributes its record says it never had", ino),
               "mark the record as having them", [&] {
                 meta::Inode fixed = inode;
                 fixed.may_have_xattrs = true;
                 Status stored = store_.RepairInode(fixed);
                 if (stored.ok()) inode = fixed;
                 return stored;
               });
  }
}

uint64_t Checker::LostAndFound() {
  if (lost_and_found_ != 0) return lost_and_found_;
  auto existing = store_.Lookup(meta::kRootIno, kLostAndFound);
  if (existing.ok() && S_ISDIR(existing->mode)) return lost_and_found_ = existing->ino;
  if (existing.ok()) {
    Unrepairable("/lost+found is not a directory", "rename it so fsck can create one");
    return 0;
  }
  meta::NewNode node;
  node.mode = S_IFDIR | 0700;
  auto made = store_.Create(meta::kRootIno, kLostAndFound, node);
  if (!made.ok()) {
    Unrepairable("cannot create /lost+found", made.status().ToString());
    return 0;
  }
  inodes_[made->ino] = *made;
  names_[made->ino].push_back({meta::kRootIno, kLostAndFound});
  subdirs_[meta::kRootIno]++;
  // Create raised the root's link count itself; keep the copy in step.
  if (auto root = store_.GetInode(meta::kRootIno); root.ok()) inodes_[meta::kRootIno] = *root;
  return lost_and_found_ = made->ino;
}

void Checker::CheckReachability() {
  for (auto& [ino, inode] : inodes_) {
    if (ino == meta::kRootIno) continue;
    const bool named = names_.count(ino) != 0 && !names_[ino].empty();
    const bool marked = orphan_marks_.count(ino) != 0;
    if (named) {
      if (marked) {
        Repairable(fmt::format("inode {} has names but is marked unlinked", ino),
                   "clear the mark", [&] { return store_.RepairOrphanMark(ino, false); });
      }
      continue;
    }
    if (S_ISREG(inode.mode) && (marked || inode.nlink == 0)) {
      // Unlinked while open, or a crash between an unlink and freeing its
      // objects: the next mount would free them too.
      unlinked_.insert(ino);
      Repairable(fmt::format("inode {}: unlinked file whose objects are not yet freed", ino),
                 "free its objects and erase it", [&] {
                   Status reclaimed = Reclaim(ino);
                   if (reclaimed.ok()) reclaimed_.insert(ino);
                   return reclaimed;
                 });
      continue;
    }
    const std::string name = "#" + std::to_string(ino);
    const uint32_t type = inode.mode & S_IFMT;
    Repairable(fmt::format("inode {} ({}) has no name", ino, TypeName(type)),
               "link it as /lost+found/" + name, [&]() -> Status {
                 const uint64_t found = LostAndFound();
                 if (found == 0) return Status::Error(EIO, "no /lost+found");
                 SFS_RETURN_IF_ERROR(
                     store_.RepairDirent(found, name, meta::DirEntry{name, ino, type}));
                 if (marked) SFS_RETURN_IF_ERROR(store_.RepairOrphanMark(ino, false));
                 names_[ino].push_back({found, name});
                 if (!S_ISDIR(type)) return Status::Ok();
                 // A directory moves in whole: its ".." and the link it
                 // gives /lost+found, as a rename would.
                 subdirs_[found]++;
                 meta::Inode& moved = inodes_[ino];
                 moved.parent = found;
                 SFS_RETURN_IF_ERROR(store_.RepairInode(moved));
                 meta::Inode& holder = inodes_[found];
                 holder.nlink++;
                 return store_.RepairInode(holder);
               });
  }
}

Status Checker::Reclaim(uint64_t ino) {
  auto blob = layouts_.find(ino);
  if (blob != layouts_.end()) {
    auto layout = layout::Decode(blob->second);
    if (!layout.ok()) return layout.status();
    for (const layout::StripeObject& object : layout->objects) {
      if (object.ost >= osts_.size() || osts_[object.ost] == nullptr) {
        return Status::Error(EIO, fmt::format("OST {} is not available; the next mount frees "
                                              "its objects", object.ost));
      }
      SFS_RETURN_IF_ERROR(osts_[object.ost]->Remove(object.object_id));
    }
  }
  return store_.EraseRecords(ino);
}

void Checker::CheckLinkCounts() {
  for (auto& [ino, inode] : inodes_) {
    if (unlinked_.count(ino) != 0) continue;
    const auto named = names_.find(ino);
    if (ino != meta::kRootIno && (named == names_.end() || named->second.empty())) continue;
    const bool dir = S_ISDIR(inode.mode);
    const uint32_t links = dir ? 2 + subdirs_[ino] : static_cast<uint32_t>(named->second.size());
    const uint64_t parent = ino == meta::kRootIno ? meta::kRootIno : named->second.front().parent;
    meta::Inode fixed = inode;
    std::string text;
    if (inode.nlink != links) {
      text = fmt::format("inode {}: link count {}, should be {}", ino, inode.nlink, links);
      fixed.nlink = links;
    }
    if (dir && inode.parent != parent) {
      text += (text.empty() ? fmt::format("inode {}: ", ino) : "; ") +
              fmt::format("'..' is {}, should be {}", inode.parent, parent);
      fixed.parent = parent;
    }
    if (text.empty()) continue;
    Repairable(text, "store the counted values", [&] {
      Status stored = store_.RepairInode(fixed);
      if (stored.ok()) inode = fixed;
      return stored;
    });
  }
}

void Checker::CheckIdMarks() {
  if (max_ino_ >= marks_.next_ino) {
    Repairable(fmt::format("inode high-water mark {} is not above inode {} in use",
                           marks_.next_ino, max_ino_),
               fmt::format("raise it to {}", max_ino_ + 1),
               [&] { return store_.RaiseIdMarks({max_ino_ + 1, 0}); });
  }
  if (max_obj_ >= marks_.next_obj) {
    Repairable(fmt::format("object id high-water mark {:#x} is not above object {:#x} in use",
                           marks_.next_obj, max_obj_),
               fmt::format("raise it to {:#x}", max_obj_ + 1),
               [&] { return store_.RaiseIdMarks({0, max_obj_ + 1}); });
  }
}

Status Checker::CheckUsage() {
  std::map<QuotaId, QuotaUsage> counted;
  size_t unreadable = 0;
  Status s = store_.ScanInodes([&](uint64_t, const Result<meta::Inode>& inode) {
    if (!inode.ok()) {
      ++unreadable;
      return;
    }
    for (const meta::Charge& charge : meta::ChargesOf(*inode)) {
      QuotaUsage& usage = counted[charge.id];
      usage.bytes += charge.bytes;
      usage.inodes += charge.inodes;
    }
  });
  SFS_RETURN_IF_ERROR(s);
  if (unreadable > 0) {
    // Whose they are is unknown: a count without them would be wrong too.
    return Status::Ok();
  }
  std::erase_if(counted, [](const auto& kv) { return kv.second.bytes == 0 && kv.second.inodes == 0; });
  const std::map<QuotaId, QuotaUsage> stored = store_.AllUsage();
  std::set<QuotaId> ids;
  for (const auto& [id, usage] : stored) ids.insert(id);
  for (const auto& [id, usage] : counted) ids.insert(id);
  for (const QuotaId& id : ids) {
    const QuotaUsage have = stored.count(id) ? stored.at(id) : QuotaUsage{};
    const QuotaUsage want = counted.count(id) ? counted.at(id) : QuotaUsage{};
    if (have.bytes == want.bytes && have.inodes == want.inodes) continue;
    // One repair sets every record; the findings after the first find it done.
    Repairable(fmt::format("quota usage of {}: stored {} bytes and {} inodes, counted {} and {}",
                           ToString(id), have.bytes, have.inodes, want.bytes, want.inodes),
               "store the counted usage", [&] { return store_.RepairUsage(counted); });
  }
  return Status::Ok();
}

Result<Report> Check(meta::MetaStore& store, const OstBackends& osts, const Options& options,
                     const std::function<void(const Finding&)>& on_finding) {
  Checker checker(store, osts, options, on_finding);
  SFS_RETURN_IF_ERROR(checker.Load());
  checker.CheckEntries();
  checker.CheckStrayRecords();
  checker.CheckReachability();
  checker.CheckLinkCounts();
  checker.CheckObjects();
  checker.CheckIdMarks();
  SFS_RETURN_IF_ERROR(checker.CheckUsage());
  SFS_RETURN_IF_ERROR(store.Sync());
  return checker.TakeReport();
}

}  // namespace sfs::fsck
