// Regular-file data ops. Each read, write, truncate, punch or fsync becomes
// one OST request per touched stripe; the FUSE thread returns as soon as
// they are queued and the last part to finish sends the reply.
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fuse.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/log.h"
#include "fs/fuse_channel.h"
#include "fs/extent_credits.h"
#include "fs/io.h"
#include "fs/ops.h"
#include "fs/ops_common.h"
#include "fs/pipe_pool.h"
#include "control/quota_control.h"
#include "control/space_grants.h"
#include "ring/fuse_ring.h"

namespace sfs::fs {
namespace {

FileHandle* Handle(fuse_file_info* fi) { return reinterpret_cast<FileHandle*>(fi->fh); }

// The objects of an open file, for requests about to be made: from now on
// they may be open in their OSTs' caches, so closing the file closes them.
Target TargetOf(OpenFile& file) {
  if (!file.touched.load(std::memory_order_relaxed)) file.touched.store(true);
  return Target{&file.layout, &file.objects, file.ino, file.created.get(), file.allocated.get()};
}

// The stripes whose parts of a write or preallocation created their
// objects (the file had not recorded them as created): the file records
// them (MarkCreated) whatever the other parts did, and from then on a
// missing object reads as lost, never as zeros. A part that failed after
// its object was made (ENOSPC inside the OST's filesystem) counts too: its
// object keeps what it allocated, and only a recorded object is freed by
// unlink.
class NewObjects {
 public:
  // From MultiPartOp::OnPart, on service threads.
  void Note(const ost::IoRequest& part, const Status&) {
    if (!part.object_exists || part.must_exist) return;
    std::lock_guard<std::mutex> lock(mu_);
    stripes_.push_back(static_cast<uint32_t>(part.tag));
  }
  // From Finish, once no part runs any more.
  const std::vector<uint32_t>& stripes() const { return stripes_; }

 private:
  std::mutex mu_;                 // guards stripes_ while parts finish
  std::vector<uint32_t> stripes_;  // GUARDED_BY(mu_)
};

// Records `stripes` as created and stores the layout saying so.
// REQUIRES: file.times_mu held.
Status MarkCreated(Filesystem& fs, OpenFile& file, const std::vector<uint32_t>& stripes) {
  if (stripes.empty()) return Status::Ok();
  for (uint32_t stripe : stripes) file.created[stripe].store(true);
  return fs.SaveObjects(file);
}

// Raises the cached size to `end` unless it is already larger.
void GrowSize(OpenFile& file, uint64_t end) {
  uint64_t seen = file.size.load(std::memory_order_relaxed);
  while (seen < end && !file.size.compare_exchange_weak(seen, end)) {
  }
}

// EFBIG, with one log line, when `end` (a new size, or where a write or
// preallocation would end) lies past `limit` (Filesystem::FileSizeLimit).
Status CheckSizeLimit(uint64_t ino, uint64_t end, uint64_t limit, const char* what) {
  if (end <= limit) return Status::Ok();
  return Status::Error(EFBIG, fmt::format("{} of inode {} to {} bytes: its OSTs' filesystems hold "
                                          "files of this layout up to {} bytes",
                                          what, ino, end, limit));
}

// Whose quota a change to `file` counts for.
control::QuotaOwner OwnerOf(const OpenFile& file) {
  return control::QuotaOwner{file.uid.load(), file.gid.load(), file.projid.load()};
}

// The OST of the stripe that holds file byte `offset`: the one whose
// quota chunk pays for growth ending there.
uint32_t OstAt(const layout::Layout& layout, uint64_t offset) {
  return layout.objects[(offset / layout.stripe_size) % layout.stripe_count()].ost;
}

// The room a write or preallocation part may take on its OST: its bytes
// past the object's end, and those inside too unless the object is known
// to hold no holes (its allocation, as its OST last reported it, covers
// its size), plus a block at each end for rounding (the 1 % the grants
// keep back covers larger blocks).
uint64_t SpaceNeeded(const OpenFile& file, uint64_t file_size, const ost::IoRequest& part) {
  constexpr uint64_t kBlock = 4096;
  const uint32_t stripe = static_cast<uint32_t>(part.tag);
  const uint64_t object_size = layout::ObjectSizeFor(file.layout, stripe, file_size);
  const uint64_t begin = part.info.offset;
  const uint64_t end = begin + part.info.length;
  uint64_t needed = end > object_size ? end - std::max(begin, object_size) : 0;
  const bool dense = file.allocated[stripe].load(std::memory_order_relaxed) >= object_size;
  if (!dense && begin < object_size) needed += std::min(end, object_size) - begin;
  return needed == 0 ? 0 : needed + 2 * kBlock;
}

// What a data op is granted before its first part runs, after its extent
// credit and growth turn (the total order of docs/design.md): quota for
// the bytes it adds past the file's size (returned in `growth`), then room
// on every OST its parts write. Refused: EDQUOT or ENOSPC, and nothing of
// the op was started. A FUSE worker in its own callback may wait for a
// fresh space sample; on any other thread (a service thread admitting the
// op the one before it let through, which must not hold up its OST's
// queue) a refusal for room is not final: `room_wanted` is filled, for
// WaitForRoom.
Status Admit(Filesystem& fs, const nrs::RequestInfo& who, OpenFile& file, uint64_t new_end,
             const std::vector<std::unique_ptr<ost::IoRequest>>& parts, MultiPartOp* op,
             uint64_t* growth, std::vector<std::pair<uint32_t, uint64_t>>* room_wanted) {
  const uint64_t size = file.size.load();
  *growth = new_end > size ? new_end - size : 0;
  if (*growth > 0) {
    auto hold = fs.quota().ReserveBytes(OwnerOf(file), who.uid, OstAt(file.layout, new_end - 1),
                                        *growth);
    if (!hold.ok()) {
      return Status::Error(hold.err(), "inode " + std::to_string(file.ino) + ": " +
                                           hold.status().message());
    }
    op->set_quota(std::move(hold).value());
  }
  std::vector<std::pair<uint32_t, uint64_t>> per_ost;
  for (const auto& part : parts) {
    if (part->info.op == nrs::Op::kWrite || part->info.op == nrs::Op::kAllocate) {
      per_ost.emplace_back(part->info.ost, SpaceNeeded(file, size, *part));
    }
  }
  const bool may_wait = FuseCallbackScope::active();
  auto space = fs.space().Reserve(per_ost, may_wait);
  if (!space.ok()) {
    if (space.err() == ENOSPC && !may_wait) *room_wanted = std::move(per_ost);
    return Status::Error(space.err(), "inode " + std::to_string(file.ino) + ": " +
                                          space.status().message());
  }
  op->set_space(std::move(space).value());
  return Status::Ok();
}

// An op Admit refused room off a FUSE worker: its ask waits on the space
// grants' own thread (control::SpaceGate::ReserveSoon) as it would have
// on a FUSE worker, and `go` runs there once granted (else the op is
// refused).
void WaitForRoom(Filesystem& fs, MultiPartOp* op, uint64_t ino,
                 std::vector<std::pair<uint32_t, uint64_t>> room, std::function<void()> go) {
  fs.space().ReserveSoon(
      std::move(room), [&fs, op, ino, go = std::move(go)](control::SpaceGate::Granted space) {
        if (!space.ok()) {
          return op->Refuse(fs, Status::Error(space.err(), "inode " + std::to_string(ino) + ": " +
                                                               space.status().message()));
        }
        op->set_space(std::move(space).value());
        go();
      });
}

class ReadOp final : public MultiPartOp {
 public:
  // `reply_buffer`: where the reply is to be made, if the request came
  // over io_uring (its entry's payload, ring::FuseRing::CurrentPayload):
  // the parts read straight into it and the reply is not copied again.
  ReadOp(fuse_req_t req, size_t length, std::span<char> reply_buffer) : req_(req), length_(length) {
    if (reply_buffer.size() >= length) {
      buffer_ = reply_buffer.data();
    } else {
      own_.reset(new char[length]);
      buffer_ = own_.get();
    }
  }
  char* buffer() { return buffer_; }

 private:
  void Finish(const Status& status) override {
    if (!status.ok()) return ReplyError(req_, status, "read");
    fuse_reply_buf(req_, buffer_, length_);
  }
  fuse_req_t req_;
  size_t length_;
  std::unique_ptr<char[]> own_;
  char* buffer_ = nullptr;  // own_, or the request's payload, which outlives the op's parts
};

// Reads smaller than this are copied through a buffer: a spliced reply
// costs two more system calls (the splice into our pipe, and libfuse's
// vmsplice of the header), which only the copy of a large read pays for.
// At 64 KiB the spliced path also left ORR less to reorder (seek per
// request 141-1,602 KiB in four runs against 177-230 copied;
// docs/design.md, "Fifth round"), so 64 KiB O_DIRECT reads stay copied.
constexpr size_t kSplicedReadMin = 128 * 1024;

// A read replied by splice (fs/pipe_pool.h): each part's bytes go from its
// object's page cache into a pipe of the op's, and the reply hands libfuse
// the pipes in file order, which it splices into /dev/fuse.
class SplicedReadOp final : public MultiPartOp {
 public:
  SplicedReadOp(fuse_req_t req, PipePool& pool) : req_(req), pool_(pool) {}
  ~SplicedReadOp() override {
    for (auto& pipe : pipes_) pool_.Give(std::move(pipe));
  }
  // One per part, in part order; the parts write into them.
  std::vector<std::unique_ptr<Pipe>>& pipes() { return pipes_; }
  std::vector<ReplyPiece>& pieces() { return pieces_; }

 private:
  void Finish(const Status& status) override {
    if (!status.ok()) return ReplyError(req_, status, "read");
    // fuse_bufvec ends in a one-element array; room for every piece.
    std::vector<char> storage(sizeof(fuse_bufvec) + pieces_.size() * sizeof(fuse_buf));
    auto* reply = new (storage.data()) fuse_bufvec{};
    reply->count = pieces_.size();
    for (size_t i = 0; i < pieces_.size(); ++i) {
      fuse_buf& buf = reply->buf[i];
      buf = fuse_buf{};
      buf.size = pieces_[i].length;
      buf.flags = FUSE_BUF_IS_FD;
      buf.fd = pipes_[pieces_[i].part]->read_fd();
    }
    fuse_reply_data(req_, reply, static_cast<fuse_buf_copy_flags>(0));
  }
  fuse_req_t req_;
  PipePool& pool_;
  std::vector<std::unique_ptr<Pipe>> pipes_;
  std::vector<ReplyPiece> pieces_;
};

// Starts a read replied by splice, if it is large enough and pipes with
// room for it can be had; false if not, and nothing was started.
bool TrySplicedRead(fuse_req_t req, Filesystem& fs, OpenFile& file, uint64_t offset,
                    size_t length, std::shared_ptr<void>& credit) {
  // libfuse splices a reply only if its own pipe holds the reply's header,
  // its bytes and a page per piece (fuse_send_data_iov); ours are as large
  // as the system lets this process make them, and so is libfuse's. A read
  // that would not fit goes through a buffer instead: one that cannot fit
  // even as a single piece is told before anything is built (with max_read
  // 1 MiB and pipes of 1 MiB, every large read).
  const size_t page = static_cast<size_t>(getpagesize());
  auto needed = [&](size_t pieces) { return length + page * (pieces + 2) + sizeof(fuse_out_header); };
  const size_t known = fs.read_pipes().made_capacity();
  if (length < kSplicedReadMin || (known != 0 && needed(1) > known)) return false;
  auto* op = new SplicedReadOp(req, fs.read_pipes());
  op->set_interruptible(req);
  auto parts = PipedReadParts(TargetOf(file), offset, length, Caller(req, fs), op, &op->pieces());
  for (auto& part : parts) {
    std::unique_ptr<Pipe> pipe = fs.read_pipes().Take();
    if (pipe == nullptr || pipe->capacity() < needed(op->pieces().size())) {
      fs.read_pipes().Give(std::move(pipe));
      delete op;  // gives back the pipes it already took
      return false;
    }
    part->pipe = pipe->write_fd();
    op->pipes().push_back(std::move(pipe));
  }
  op->set_credit(std::move(credit));
  op->Launch(fs, std::move(parts));
  return true;
}

// After a refused write that reached past the end of the file: cuts every
// object back to that end, so the part the write stored before failing can
// never surface (a later write further on would make it file data), then
// sends the write's error. Nothing else can be writing past that end: the
// refused write still holds its file's growth turn (GrowthTurn), which every
// op growing the file waits for.
class CutBackOp final : public MultiPartOp {
 public:
  CutBackOp(fuse_req_t req, Status error) : req_(req), error_(std::move(error)) {}

 private:
  void Finish(const Status& status) override {
    // A failed cut is already logged by its OST; the caller hears of the write.
    ReplyError(req_, error_, "write");
  }
  fuse_req_t req_;
  Status error_;
};

class WriteOp final : public MultiPartOp {
 public:
  // `data` is FUSE's buffer, valid only until the callback returns: parts
  // point into it, and OwnBuffers copies it once a part must outlive that.
  // `kill_setid`: the kernel asked for set-ID bits to go (the writer lacks
  // CAP_FSETID: WriteKillsSetId).
  WriteOp(fuse_req_t req, std::shared_ptr<OpenFile> file, uint64_t offset, const char* data,
          size_t length, const nrs::RequestInfo& who, bool kill_setid)
      : req_(req), file_(std::move(file)), offset_(offset), length_(length), who_(who),
        kill_setid_(kill_setid), borrowed_(data) {
    // A request that came over io_uring keeps its data in its entry until
    // the reply, which comes after the last part: nothing to copy.
    const std::span<char> payload = ring::FuseRing::CurrentPayload();
    lasting_ = !payload.empty() && data >= payload.data() &&
               data + length <= payload.data() + payload.size();
  }
  char* buffer() { return const_cast<char*>(borrowed_); }  // only read from
  // What the write adds to the file's size (Admit), which its quota
  // reservation covers.
  void set_growth(uint64_t growth) { growth_ = growth; }

  void OwnBuffers(ost::IoRequest& part) override {
    if (lasting_) return;
    if (!own_) {
      own_.reset(new char[length_]);
      std::memcpy(own_.get(), borrowed_, length_);
    }
    for (iovec& piece : part.iov) {
      const char* base = static_cast<const char*>(piece.iov_base);
      if (base >= borrowed_ && base < borrowed_ + length_) {
        piece.iov_base = own_.get() + (base - borrowed_);
      }
    }
  }

 private:
  void OnPart(const ost::IoRequest& part, const Status& status) override {
    created_.Note(part, status);
  }

  void Finish(const Status& status) override {
    // Nothing was sent: no object changed, nothing to record or cut back.
    if (refused() || interrupted()) return ReplyError(req_, status, "write");
    Status marked;
    {
      std::lock_guard<std::mutex> lock(file_->times_mu);
      marked = MarkCreated(Fs(req_), *file_, created_.stripes());
    }
    // Outside times_mu: the cut-back may be served on this very thread.
    if (!marked.ok()) return Refused(marked);
    if (!status.ok()) return Refused(status);
    Status noted = NoteSizeAndTimes();
    if (!noted.ok()) return Refused(noted);
    if (quota() != nullptr) quota()->Use(growth_);  // stored with the size
    // The reply cannot carry the mode, and the kernel keeps the one it had:
    // stale before write(2) returns, not after (InvalidateAttrs).
    if (cleared_setid_) Fs(req_).InvalidateAttrs(file_->ino);
    fuse_reply_write(req_, length_);
  }

  Status NoteSizeAndTimes() {
    const uint64_t end = offset_ + length_;
    // A write by a caller without CAP_FSETID clears set-user/group-ID bits.
    const bool kill_suid = kill_setid_ && file_->setid.load();
    // With the writeback cache the kernel keeps mtime and ctime itself and
    // sends them with setattr after the data (or before: these replies race
    // it), so a write here must not store a time of its own.
    const bool kernel_times = Fs(req_).config().writeback;
    std::lock_guard<std::mutex> lock(file_->times_mu);
    if (end <= file_->size.load() && !kill_suid) {
      // Inside the recorded size only mtime changes; it is kept with the
      // open file until fsync, setattr or close (OpenFile::unsaved_mtime).
      if (!kernel_times) file_->unsaved_mtime = meta::Timestamp::Now();
      return Status::Ok();
    }
    // Size is recorded after the data is in the objects, so a crash in
    // between never exposes bytes that were not written.
    auto noted = Fs(req_).meta().NoteWrite(file_->ino, end, kill_suid, !kernel_times);
    if (!noted.ok()) return noted.status();
    if (!kernel_times) file_->unsaved_mtime.reset();  // NoteWrite stored a newer one
    cleared_setid_ = kill_suid && !HasSetId(noted->mode);
    file_->setid.store(HasSetId(noted->mode));
    GrowSize(*file_, end);
    return Status::Ok();
  }

  // A write that failed, or whose size could not be recorded, leaves no
  // bytes past the end of file that a later write could expose.
  void Refused(const Status& status) {
    const uint64_t end = file_->size.load();
    if (offset_ + length_ <= end) return ReplyError(req_, status, "write");
    auto* cut = new CutBackOp(req_, status);
    cut->set_turn(turn());  // the next growing op waits for the cut too
    cut->set_credit(credit());  // so does overlapping I/O
    cut->Launch(Fs(req_), EveryStripe(TargetOf(*file_), nrs::Op::kTruncate, end, who_, cut));
  }

  fuse_req_t req_;
  std::shared_ptr<OpenFile> file_;
  uint64_t offset_;
  size_t length_;
  const nrs::RequestInfo who_;  // the writer, for follow-up requests
  const bool kill_setid_;
  const char* const borrowed_;   // FUSE's; see the constructor
  bool lasting_ = false;         // borrowed_ lives until the reply (an io_uring entry's)
  std::unique_ptr<char[]> own_;  // the copy, once one was needed
  NewObjects created_;
  uint64_t growth_ = 0;
  bool cleared_setid_ = false;  // by NoteSizeAndTimes
};

// Cuts every object to the file's end, then starts the op (a write or a
// preallocation) that grows the file from past that end: whatever a crash
// left there must read as zeros once it is inside the file.
class TrimOp final : public MultiPartOp {
 public:
  TrimOp(Filesystem& fs, MultiPartOp* next, std::vector<std::unique_ptr<ost::IoRequest>> parts)
      : fs_(fs), next_(next), parts_(std::move(parts)) {}

 private:
  void Finish(const Status&) override {
    // A failed cut is logged by its OST; the next op reports its own outcome.
    next_->Launch(fs_, std::move(parts_));
  }
  Filesystem& fs_;
  MultiPartOp* next_;  // launched exactly once, here
  std::vector<std::unique_ptr<ost::IoRequest>> parts_;
};

// The turn of a growing op (OpenFile::growth_*): held by the op and by any
// cut-back it starts; when the last holder lets go, the next waiting op of
// the file starts.
class GrowthTurn {
 public:
  explicit GrowthTurn(std::shared_ptr<OpenFile> file) : file_(std::move(file)) {}
  GrowthTurn(const GrowthTurn&) = delete;
  GrowthTurn& operator=(const GrowthTurn&) = delete;
  ~GrowthTurn() {
    std::function<void()> next;
    {
      std::lock_guard<std::mutex> lock(file_->growth_mu);
      if (file_->growth_waiting.empty()) {
        file_->growth_busy = false;
        return;
      }
      next = std::move(file_->growth_waiting.front());
      file_->growth_waiting.pop_front();
    }
    // On whichever thread let go last, maybe a FUSE worker inside its own
    // callback: the next op must not be served inline there.
    const NotInFuseCallback outside;
    next();  // starts with the turn handed over: growth_busy stays set
  }

  // Runs `start` with the file's turn: now if no growing op is in flight,
  // else once the ones before it are done.
  // `before_waiting` runs first if it has to wait.
  static void Take(const std::shared_ptr<OpenFile>& file,
                   std::function<void(std::shared_ptr<GrowthTurn>)> start,
                   const std::function<void()>& before_waiting) {
    auto begin = [file, start = std::move(start)] {
      start(std::make_shared<GrowthTurn>(file));
    };
    {
      std::lock_guard<std::mutex> lock(file->growth_mu);
      if (file->growth_busy) {
        before_waiting();
        file->growth_waiting.push_back(std::move(begin));
        return;
      }
      file->growth_busy = true;
    }
    begin();
  }

 private:
  std::shared_ptr<OpenFile> file_;
};

// Stores the file's writing mark (Filesystem::MarkWriting) if `parts` may
// leave objects past what the store records: they grow the file to
// `new_end`, or write or preallocate an object not recorded as created.
// Once per open; every later op costs one atomic load.
Status MarkIfWriting(Filesystem& fs, OpenFile& file, uint64_t new_end,
                     const std::vector<std::unique_ptr<ost::IoRequest>>& parts) {
  if (file.writing_marked.load(std::memory_order_acquire)) return Status::Ok();
  bool needed = new_end > file.size.load();
  for (const auto& part : parts) {
    const bool changes = part->info.op == nrs::Op::kWrite || part->info.op == nrs::Op::kAllocate;
    needed |= changes && !part->must_exist;
  }
  return needed ? fs.MarkWriting(file) : Status::Ok();
}

// Launches `op` with `parts` once admitted (Admit; refused, the op
// finishes with its error having started nothing). An op that grows the
// file to `new_end` waits for its turn (GrowthTurn), and is admitted in it,
// where the size it grows from is settled. If `op` makes [end of file,
// unwritten_until) part of the file without writing it (a write further
// on, a preallocation) and the objects were not trimmed yet in this open
// (OpenFile::trimmed), they are cut to the end first. Later gaps are
// clean: a refused write cuts back itself. `admitted(growth)` runs once
// the op is admitted, before it starts.
void LaunchGrowing(Filesystem& fs, const nrs::RequestInfo& who,
                   const std::shared_ptr<OpenFile>& file, uint64_t unwritten_until,
                   uint64_t new_end, MultiPartOp* op,
                   std::vector<std::unique_ptr<ost::IoRequest>> parts,
                   const std::function<void(uint64_t)>& admitted) {
  if (new_end <= file->size.load()) {
    // Inside the file: nothing to trim (unwritten_until <= new_end), and no
    // growing op's cut reaches below the recorded size.
    if (Status marked = MarkIfWriting(fs, *file, new_end, parts); !marked.ok()) {
      return op->Refuse(fs, std::move(marked));
    }
    uint64_t growth = 0;
    std::vector<std::pair<uint32_t, uint64_t>> room;
    if (Status ok = Admit(fs, who, *file, new_end, parts, op, &growth, &room); !ok.ok()) {
      if (room.empty()) return op->Refuse(fs, std::move(ok));
      auto waiting = std::make_shared<std::vector<std::unique_ptr<ost::IoRequest>>>(std::move(parts));
      return WaitForRoom(fs, op, file->ino, std::move(room), [&fs, op, waiting, admitted, growth] {
        admitted(growth);
        op->Launch(fs, std::move(*waiting));
      });
    }
    admitted(growth);
    op->Launch(fs, std::move(parts));
    return;
  }
  auto shared_parts =
      std::make_shared<std::vector<std::unique_ptr<ost::IoRequest>>>(std::move(parts));
  // Parts kept for a later launch must not point into the caller's buffer.
  auto own_parts = [op, shared_parts] {
    for (auto& part : *shared_parts) op->OwnBuffers(*part);
  };
  GrowthTurn::Take(
      file,
      [&fs, who, file, unwritten_until, new_end, op, shared_parts, own_parts,
       admitted](std::shared_ptr<GrowthTurn> turn) {
        op->set_turn(std::move(turn));
        if (Status marked = MarkIfWriting(fs, *file, new_end, *shared_parts); !marked.ok()) {
          return op->Refuse(fs, std::move(marked));
        }
        auto go = [&fs, who, file, unwritten_until, op, shared_parts, own_parts,
                   admitted](uint64_t growth) {
          admitted(growth);
          const uint64_t end = file->size.load();
          if (unwritten_until > end && !file->trimmed.exchange(true)) {
            own_parts();
            auto* trim = new TrimOp(fs, op, std::move(*shared_parts));
            trim->Launch(fs, EveryStripe(TargetOf(*file), nrs::Op::kTruncate, end, who, trim));
            return;
          }
          op->Launch(fs, std::move(*shared_parts));
        };
        uint64_t growth = 0;
        std::vector<std::pair<uint32_t, uint64_t>> room;
        if (Status ok = Admit(fs, who, *file, new_end, *shared_parts, op, &growth, &room);
            !ok.ok()) {
          if (room.empty()) return op->Refuse(fs, std::move(ok));
          return WaitForRoom(fs, op, file->ino, std::move(room), [go, growth] { go(growth); });
        }
        go(growth);
      },
      own_parts);
}

class SyncOp final : public MultiPartOp {
 public:
  SyncOp(fuse_req_t req, std::shared_ptr<OpenFile> file) : req_(req), file_(std::move(file)) {}

 private:
  void Finish(const Status& status) override {
    if (!status.ok()) return ReplyError(req_, status, "fsync");
    Status saved = Fs(req_).SaveTimes(*file_);
    if (!saved.ok()) return ReplyError(req_, saved, "fsync");
    Status synced = Fs(req_).meta().Sync();
    if (!synced.ok()) return ReplyError(req_, synced, "fsync");
    fuse_reply_err(req_, 0);
  }
  fuse_req_t req_;
  std::shared_ptr<OpenFile> file_;
};

// Truncate (setattr with a size): objects first, then the inode.
class TruncateOp final : public MultiPartOp {
 public:
  TruncateOp(fuse_req_t req, uint64_t ino, meta::AttrChange change, uint64_t growth)
      : req_(req), ino_(ino), change_(std::move(change)), growth_(growth) {}
  // The open file, or, for a file that is not open, its layout, fresh
  // handles and the objects' allocation (reported by the OSTs, stored here).
  std::shared_ptr<OpenFile> file;
  layout::Layout layout;
  std::vector<std::shared_ptr<ost::ObjectHandle>> objects;
  std::unique_ptr<std::atomic<uint64_t>[]> allocated;

  Target MakeTarget() {
    if (file) return TargetOf(*file);
    allocated = std::make_unique<std::atomic<uint64_t>[]>(layout.stripe_count());
    for (uint32_t i = 0; i < layout.stripe_count(); ++i) {
      allocated[i].store(layout.objects[i].allocated);
    }
    return Target{&layout, &objects, ino_, nullptr, allocated.get()};
  }

 private:
  void Finish(const Status& status) override {
    if (!file) {
      Fs(req_).CloseObjects(layout);
      if (status.ok()) {
        uint64_t total = 0;
        for (uint32_t i = 0; i < layout.stripe_count(); ++i) {
          layout.objects[i].allocated = allocated[i].load();
          total += layout.objects[i].allocated;
        }
        // Advisory (st_blocks): a failure to store it fails nothing.
        Status stored = Fs(req_).meta().PutLayout(ino_, layout::Encode(layout), total);
        if (!stored.ok()) {
          Logger("fs")->warn("allocation of inode {} not stored: {}", ino_, stored.ToString());
        }
      }
    }
    if (!status.ok()) return ReplyError(req_, status, "truncate");
    // StoreAttr updates whichever file is open by now: it may have been
    // opened meanwhile, having read the old size (AcquireOpen); an open
    // file's allocation is stored with it.
    auto stored = Fs(req_).StoreAttr(ino_, change_);
    if (stored.ok() && quota() != nullptr) quota()->Use(growth_);
    ReplyAttr(req_, stored, "truncate");
  }
  fuse_req_t req_;
  uint64_t ino_;
  meta::AttrChange change_;
  const uint64_t growth_;  // what the truncate adds to the size (quota)
};

// fallocate: punch or preallocate; a preallocation may grow the file.
class FallocateOp final : public MultiPartOp {
 public:
  // `kill_setid`: the caller is not root (see Finish).
  FallocateOp(fuse_req_t req, std::shared_ptr<OpenFile> file, uint64_t new_end, bool kill_setid)
      : req_(req), file_(std::move(file)), new_end_(new_end), kill_setid_(kill_setid) {}
  void set_growth(uint64_t growth) { growth_ = growth; }

 private:
  void OnPart(const ost::IoRequest& part, const Status& status) override {
    if (part.info.op == nrs::Op::kAllocate) created_.Note(part, status);
  }

  void Finish(const Status& status) override {
    {
      std::lock_guard<std::mutex> lock(file_->times_mu);
      Status marked = MarkCreated(Fs(req_), *file_, created_.stripes());
      if (!marked.ok()) return ReplyError(req_, marked, "fallocate");
      Fs(req_).SaveAllocation(*file_);  // a punch or preallocation changed it
    }
    if (!status.ok()) return ReplyError(req_, status, "fallocate");
    meta::AttrChange change;
    if (new_end_ > file_->size.load()) change.size = new_end_;
    // Like a write: a change to the data by non-root clears set-ID bits.
    // With FUSE_HANDLE_KILLPRIV_V2 (fs/fuse_channel.h) the kernel leaves
    // that to us and sends no setattr for it.
    change.kill_setid = kill_setid_ && file_->setid.load();
    if (change.size.has_value() || change.kill_setid) {
      auto inode = Fs(req_).StoreAttr(file_->ino, change);
      if (!inode.ok()) return ReplyError(req_, inode.status(), "fallocate");
      if (change.size.has_value() && quota() != nullptr) quota()->Use(growth_);
    }
    // The reply carries no attributes, and the kernel keeps the mode it had.
    if (change.kill_setid) Fs(req_).InvalidateAttrs(file_->ino);
    fuse_reply_err(req_, 0);
  }
  fuse_req_t req_;
  std::shared_ptr<OpenFile> file_;
  uint64_t new_end_;
  const bool kill_setid_;
  NewObjects created_;
  uint64_t growth_ = 0;
};

void OpenReply(fuse_req_t req, fuse_file_info* fi, Filesystem::Opened opened) {
  std::shared_ptr<OpenFile> file = std::move(opened.file);
  // Each handle is an owner of the file's extent credits: alone on the
  // file it caches a write credit over all of it (fs/extent_credits.h).
  const resource::OwnerId owner =
      file->extents ? file->extents->AddOwner("handle") : resource::kRootOwner;
  fi->fh = reinterpret_cast<uint64_t>(
      new FileHandle{std::move(file), fi->flags, Caller(req, Fs(req)), owner});
  // Every change to the data goes through this mount, so cached pages stay
  // valid across opens. Not on a client mount: other clients write too, so
  // an open drops what the kernel cached (close-to-open, as NFS).
  fi->keep_cache = Fs(req).is_client() ? 0 : 1;
  // O_DIRECT: with the writeback cache the kernel's own direct I/O path
  // runs it, which writes dirty cached pages of the range back first (so a
  // direct read sees a cached write) and drops cached pages a direct write
  // makes stale. A direct_io handle would skip both.
  Filesystem& fs = Fs(req);
  if ((fi->flags & O_DIRECT) && !fs.config().writeback) fi->direct_io = 1;
  // cache=writearound: a writer's bytes skip the client page cache (copied
  // from the writer's memory into the request, then into the object: two
  // copies, not three). A write-only handle cannot be mapped; a read-write
  // one may be, and keeps shared mmap only where the kernel allows mapping
  // a direct_io handle. The kernel drops cached pages of a range before a
  // direct write to it, so cached readers of other handles see the write.
  if (fs.config().direct_writes && !fs.config().writeback) {
    const int access = fi->flags & O_ACCMODE;
    const bool mmap_ok =
        (fs.init_amendment().granted.load(std::memory_order_relaxed) & kFuseDirectIoAllowMmap) != 0;
    if (access == O_WRONLY || (access == O_RDWR && mmap_ok)) fi->direct_io = 1;
  }
  // A client mount: another client's write reaches the OSTs without this
  // mount hearing of it (until the MDS grants data credits), so reads and
  // writes bypass the kernel's page cache: a read sees every write that
  // returned anywhere. Where the kernel cannot map a direct_io handle
  // (before Linux 6.6) pages are cached within an open (close-to-open).
  if (fs.is_client()) {
    const bool mmap_ok =
        (fs.init_amendment().granted.load(std::memory_order_relaxed) & kFuseDirectIoAllowMmap) != 0;
    if (mmap_ok) fi->direct_io = 1;
  }
  // Close skips the FLUSH round trip (one of three an open-and-close
  // costs): flush would only store the mtime that in-place writes left
  // unsaved, and the release the kernel queues before close(2) returns
  // stores it too (Filesystem::ReleaseOpen). With the writeback cache the
  // kernel ignores this and flushes: its close writes dirty pages back.
  fi->noflush = 1;
}

void ServeCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                 fuse_file_info* fi) {
  Filesystem& fs = Fs(req);
  // On a client mount the MDS opens it in the create's call.
  client::MdsClient::Opened at_mds;
  client::MdsClient::Opened* opened = fs.is_client() ? &at_mds : nullptr;
  auto inode = MakeNode(req, parent, name, S_IFREG | (mode & 07777), 0, nullptr, opened);
  if (!inode.ok()) return ReplyError(req, inode.status(), "create");
  auto file = fs.AcquireOpen(inode->ino, opened);
  if (!file.ok()) {
    // The caller is told the create failed, so the name must not stay.
    (void)fs.Unlink(parent, name);
    return ReplyError(req, file.status(), "create");
  }
  OpenReply(req, fi, std::move(file).value());
  fuse_entry_param entry;
  FillEntry(*inode, fs.AttrTimeout(inode->ino), &entry);
  entry.entry_timeout = fs.EntryTimeout(parent, inode->ino);
  fuse_reply_create(req, &entry, fi);
}

void ServeOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto file = Fs(req).AcquireOpen(ino, nullptr, /*removed_ok=*/false, fi->flags);
  if (!file.ok()) return ReplyError(req, file.status(), "open");
  OpenReply(req, fi, std::move(file).value());
  fuse_reply_open(req, fi);
}

// Create and open pass the metadata service's NRS heads (ThroughMdt) with
// a copy of the kernel's fuse_file_info, which the reply copies back.
void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
              fuse_file_info* fi) {
  ThroughMdt(req, nrs::Op::kCreate, jobstats::JobOp::kCreate, parent,
             [req, parent, name = std::string(name), mode, info = *fi]() mutable {
               ServeCreate(req, parent, name.c_str(), mode, &info);
             });
}

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  ThroughMdt(req, nrs::Op::kOpen, jobstats::JobOp::kOpen, ino,
             [req, ino, info = *fi]() mutable { ServeOpen(req, ino, &info); });
}

void OpRelease(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  std::unique_ptr<FileHandle> handle(Handle(fi));
  MetaJobCount count(Fs(req), handle->opener.jobid, jobstats::JobOp::kClose);
  if (handle->file->extents) handle->file->extents->RemoveOwner(handle->extent_owner);
  Fs(req).ReleaseOpen(handle->file);
  fuse_reply_err(req, 0);
}

// Only with the writeback cache (every other handle is noflush): the
// kernel has written the handle's dirty pages back; the mtime that
// in-place writes left unsaved is stored before close(2) returns.
void OpFlush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Status saved = Fs(req).SaveTimes(*Handle(fi)->file);
  if (!saved.ok()) return ReplyError(req, saved, "flush");
  fuse_reply_err(req, 0);
}

void OpRead(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  const FuseCallbackScope in_callback;
  Filesystem& fs = Fs(req);
  FileHandle& handle = *Handle(fi);
  const uint64_t offset = static_cast<uint64_t>(off);
  // Another client may have written past the size this one knows: a read
  // that reaches past it asks the MDS first.
  if (fs.is_client() && offset + size > handle.file->size.load()) {
    auto stored = fs.meta().GetInode(handle.file->ino);
    if (stored.ok()) GrowSize(*handle.file, stored->size);
  }
  if (offset >= handle.file->size.load() || size == 0) {
    fuse_reply_buf(req, nullptr, 0);
    return;
  }
  // Taken here, in the request's own callback: the continuation below may
  // run on a thread serving another request. A request that came over
  // io_uring is answered through its entry, never by splice.
  const std::span<char> ring_payload = ring::FuseRing::CurrentPayload();
  // The size is read again with the credit held: a write it waited for may
  // have grown the file.
  WithExtent(
      handle.file, handle.extent_owner, offset, size, resource::Mode::kRead,
      [req, &fs, file = handle.file, offset, size, ring_payload](std::shared_ptr<void> credit) {
        const uint64_t file_size = file->size.load();
        if (offset >= file_size) {
          fuse_reply_buf(req, nullptr, 0);
          return;
        }
        const size_t length = static_cast<size_t>(std::min<uint64_t>(size, file_size - offset));
        if (ring_payload.empty() && TrySplicedRead(req, fs, *file, offset, length, credit)) {
          return;
        }
        auto* op = new ReadOp(req, length, ring_payload);
        op->set_interruptible(req);
        op->set_credit(std::move(credit));
        auto parts = ExtentParts(TargetOf(*file), nrs::Op::kRead, offset, length, op->buffer(),
                                 Caller(req, fs), op);
        op->Launch(fs, std::move(parts));
      },
      [] {});
}

void OpWrite(fuse_req_t req, fuse_ino_t, const char* data, size_t size, off_t off,
             fuse_file_info* fi) {
  const FuseCallbackScope in_callback;
  Filesystem& fs = Fs(req);
  auto& file = Handle(fi)->file;
  // A write from the page cache (a shared writable mmap being written back)
  // carries no caller: the kernel's flusher sends it. It is charged to the
  // process that opened the handle it came through (docs/design.md).
  const nrs::RequestInfo who = fi->writepage ? Handle(fi)->opener : Caller(req, fs);
  const uint64_t offset = static_cast<uint64_t>(off);
  if (offset + size > file->size.load()) {
    // Past what the OSTs can hold: EFBIG from there on, a short write up to
    // it, as a local filesystem answers at its s_maxbytes.
    const uint64_t limit = fs.FileSizeLimit(*file);
    if (offset >= limit) {
      return ReplyError(req, CheckSizeLimit(file->ino, offset + size, limit, "write"), "write");
    }
    size = std::min<uint64_t>(size, limit - offset);
  }
  auto* op = new WriteOp(req, file, offset, data, size, who, WriteKillsSetId());
  op->set_interruptible(req);
  auto parts = std::make_shared<std::vector<std::unique_ptr<ost::IoRequest>>>(
      ExtentParts(TargetOf(*file), nrs::Op::kWrite, offset, size, op->buffer(), who, op));
  // The extent credit before the growth turn (the order of
  // docs/design.md, "Resources and credits").
  WithExtent(
      file, Handle(fi)->extent_owner, offset, size, resource::Mode::kWrite,
      [&fs, who, file, offset, size, op, parts](std::shared_ptr<void> credit) {
        op->set_credit(std::move(credit));
        LaunchGrowing(fs, who, file, offset, offset + size, op, std::move(*parts),
                      [op](uint64_t growth) { op->set_growth(growth); });
      },
      // Waiting: the parts must not point into FUSE's buffer.
      [op, parts] {
        for (auto& part : *parts) op->OwnBuffers(*part);
      });
}

void OpFsync(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  Filesystem& fs = Fs(req);
  auto& file = Handle(fi)->file;
  auto* op = new SyncOp(req, file);
  auto parts = EveryStripe(TargetOf(*file), nrs::Op::kSync, 0, Caller(req, fs), op);
  for (auto& part : parts) part->data_only = datasync != 0;
  op->Launch(fs, std::move(parts));
}

void OpFallocate(fuse_req_t req, fuse_ino_t, int mode, off_t off, off_t length,
                 fuse_file_info* fi) {
  // As a write's: a refused space grant may wait here for a fresh sample
  // and the destroys in flight (control/space_grants.h).
  const FuseCallbackScope in_callback;
  Filesystem& fs = Fs(req);
  auto& file = Handle(fi)->file;
  const uint64_t offset = static_cast<uint64_t>(off);
  uint64_t len = static_cast<uint64_t>(length);
  nrs::Op op_kind;
  uint64_t new_end = 0;
  if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
    op_kind = nrs::Op::kPunch;
    // Nothing exists past the end of file (objects never extend past it),
    // so the punch stops there; a huge length would also exceed what the
    // OST's filesystem accepts.
    const uint64_t size = file->size.load();
    len = offset >= size ? 0 : std::min(len, size - offset);
  } else if (mode == 0 || mode == FALLOC_FL_KEEP_SIZE) {
    op_kind = nrs::Op::kAllocate;
    if (mode == 0) new_end = offset + len;
  } else {
    return ReplyError(req, Status::Error(EOPNOTSUPP, "fallocate mode " + std::to_string(mode)),
                      "fallocate");
  }
  // A preallocation past the end grows the objects even with KEEP_SIZE.
  if (op_kind == nrs::Op::kAllocate && offset + len > file->size.load()) {
    Status fits = CheckSizeLimit(file->ino, offset + len, fs.FileSizeLimit(*file), "fallocate");
    if (!fits.ok()) return ReplyError(req, fits, "fallocate");
  }
  const nrs::RequestInfo who = Caller(req, fs);
  auto* op = new FallocateOp(req, file, new_end, /*kill_setid=*/who.uid != 0);
  auto parts = std::make_shared<std::vector<std::unique_ptr<ost::IoRequest>>>(
      ExtentParts(TargetOf(*file), op_kind, offset, len, nullptr, who, op));
  // Object sizes follow the file size through truncate, never through
  // preallocation, so objects always keep their size here.
  for (auto& part : *parts) part->keep_size = true;
  WithExtent(
      file, Handle(fi)->extent_owner, offset, len, resource::Mode::kWrite,
      [&fs, who, file, new_end, op, parts](std::shared_ptr<void> credit) {
        op->set_credit(std::move(credit));
        LaunchGrowing(fs, who, file, new_end, new_end, op, std::move(*parts),
                      [op](uint64_t growth) { op->set_growth(growth); });
      },
      [] {});
}

// lseek(SEEK_DATA / SEEK_HOLE): each stripe's object is asked from the first
// of its bytes at or after the offset; a file byte is data exactly when its
// object byte is, and the mapping is monotonic per stripe, so the answer is
// the smallest file offset any stripe gives (holes: also the end of file).
class SeekOp final : public MultiPartOp {
 public:
  SeekOp(fuse_req_t req, std::shared_ptr<OpenFile> file, uint64_t offset, uint64_t size,
         int whence)
      : req_(req), file_(std::move(file)), offset_(offset), size_(size), whence_(whence),
        found_(whence == SEEK_HOLE ? size : UINT64_MAX) {}

 private:
  void OnPart(const ost::IoRequest& part, const Status& status) override {
    if (!status.ok()) return;
    // No answer from the object: no data from there on, or (for holes) the
    // object ends there, itself a hole.
    std::optional<uint64_t> object_offset = part.seek_result;
    if (!object_offset.has_value()) {
      if (whence_ == SEEK_DATA) return;
      object_offset = part.info.offset;
    }
    const uint64_t at =
        layout::FileOffsetOf(file_->layout, static_cast<uint32_t>(part.tag), *object_offset);
    std::lock_guard<std::mutex> lock(mu_);
    found_ = std::min(found_, at);
  }
  void Finish(const Status& status) override {
    if (!status.ok()) return ReplyError(req_, status, "lseek");
    const uint64_t found = std::max(found_, offset_);
    if (found >= size_) {
      if (whence_ == SEEK_HOLE) return (void)fuse_reply_lseek(req_, static_cast<off_t>(size_));
      return ReplyError(req_, Status::Error(ENXIO, "no data past the offset"), "lseek");
    }
    fuse_reply_lseek(req_, static_cast<off_t>(found));
  }
  fuse_req_t req_;
  std::shared_ptr<OpenFile> file_;
  const uint64_t offset_, size_;
  const int whence_;
  std::mutex mu_;
  uint64_t found_;  // GUARDED_BY(mu_)
};

void OpLseek(fuse_req_t req, fuse_ino_t, off_t off, int whence, fuse_file_info* fi) {
  Filesystem& fs = Fs(req);
  auto& file = Handle(fi)->file;
  const uint64_t size = file->size.load();
  if (whence != SEEK_DATA && whence != SEEK_HOLE) {
    // The kernel answers the others itself.
    return ReplyError(req, Status::Error(EINVAL, "lseek whence " + std::to_string(whence)),
                      "lseek");
  }
  if (off < 0 || static_cast<uint64_t>(off) >= size) {
    return ReplyError(req, Status::Error(ENXIO, "lseek at or past the end of file"), "lseek");
  }
  auto* op = new SeekOp(req, file, static_cast<uint64_t>(off), size, whence);
  auto parts = EveryStripe(TargetOf(*file), nrs::Op::kSeek, 0, Caller(req, fs), op);
  for (auto& part : parts) {
    part->whence = whence;
    part->info.offset = layout::ObjectSizeFor(file->layout, static_cast<uint32_t>(part->tag),
                                              static_cast<uint64_t>(off));
  }
  op->Launch(fs, std::move(parts));
}

meta::AttrChange ChangeFrom(const struct stat* attr, int to_set) {
  meta::AttrChange change;
  if (to_set & FUSE_SET_ATTR_MODE) change.mode = attr->st_mode & 07777;
  if (to_set & FUSE_SET_ATTR_UID) change.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) change.gid = attr->st_gid;
  if (to_set & FUSE_SET_ATTR_SIZE) change.size = static_cast<uint64_t>(attr->st_size);
  const meta::Timestamp now = meta::Timestamp::Now();
  if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
    change.atime = now;
  } else if (to_set & FUSE_SET_ATTR_ATIME) {
    change.atime = meta::Timestamp{attr->st_atim.tv_sec, attr->st_atim.tv_nsec};
  }
  if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
    change.mtime = now;
  } else if (to_set & FUSE_SET_ATTR_MTIME) {
    change.mtime = meta::Timestamp{attr->st_mtim.tv_sec, attr->st_mtim.tv_nsec};
  }
  return change;
}

// The truncate itself, with the file's extent credit held if it is open
// (`credit`; null if it is not).
void StartTruncate(fuse_req_t req, uint64_t ino, const meta::AttrChange& change,
                   std::shared_ptr<OpenFile> file, std::shared_ptr<void> credit) {
  Filesystem& fs = Fs(req);
  auto inode = fs.meta().GetInode(ino);
  if (!inode.ok()) return ReplyError(req, inode.status(), "truncate");
  if (!S_ISREG(inode->mode)) return ReplyAttr(req, fs.StoreAttr(ino, change), "truncate");

  // Cutting is not atomic across OSTs: a refusal from one OST after the
  // others cut their objects would lose data the caller keeps. So a file
  // with an object on an OST known to be read-only (EROFS) or unresponsive
  // (EIO: its part would fail after ost_timeout) is refused before anything
  // is cut.
  const layout::Layout* known = file ? &file->layout : nullptr;
  auto loaded = known ? Result<layout::Layout>(*known) : fs.LoadLayout(ino);
  if (!loaded.ok()) return ReplyError(req, loaded.status(), "truncate");
  for (const layout::StripeObject& object : loaded->objects) {
    const ost::Service& service = fs.ost(object.ost);
    if (service.read_only() || !service.responsive()) {
      const bool read_only = service.read_only();
      return ReplyError(req, Status::Error(read_only ? EROFS : EIO,
                                           "truncate of inode " + std::to_string(ino) + ": OST " +
                                               std::to_string(object.ost) + " is " +
                                               (read_only ? "read-only" : "unresponsive")),
                        "truncate");
    }
  }
  if (*change.size > inode->size) {
    Status fits = CheckSizeLimit(ino, *change.size, fs.FileSizeLimit(*loaded), "truncate");
    if (!fits.ok()) return ReplyError(req, fits, "truncate");
  }
  // Growing counts against quota like a write (sizes are what quotas
  // limit); cutting frees it once stored.
  std::shared_ptr<control::QuotaHold> quota;
  uint64_t growth = 0;
  if (*change.size > inode->size) {
    growth = *change.size - inode->size;
    auto hold = fs.quota().ReserveBytes(control::QuotaOwner{inode->uid, inode->gid, inode->projid},
                                        fuse_req_ctx(req)->uid, OstAt(*loaded, *change.size - 1),
                                        growth);
    if (!hold.ok()) {
      return ReplyError(req, Status::Error(hold.err(), "truncate of inode " + std::to_string(ino) +
                                                           ": " + hold.status().message()),
                        "truncate");
    }
    quota = std::move(hold).value();
  }
  auto* op = new TruncateOp(req, ino, change, growth);
  op->file = file;
  op->set_credit(std::move(credit));
  op->set_quota(std::move(quota));
  if (!file) {
    op->layout = std::move(loaded).value();
    op->objects = fs.Handles(op->layout);
  }
  const Target target = op->MakeTarget();
  // Growing a file cuts its objects to the old end instead of extending
  // them: bytes a failed or interrupted write left past that end must read
  // as zeros, and an object shorter than its share reads as a hole.
  const uint64_t object_end = std::min(*change.size, inode->size);
  auto parts = EveryStripe(target, nrs::Op::kTruncate, object_end, Caller(req, fs), op);
  op->Launch(fs, std::move(parts));
}

// chown and chgrp: the file's usage moves to its new user and group,
// which must have room for it unless the caller is root.
void ChangeOwner(fuse_req_t req, uint64_t ino, const meta::AttrChange& change) {
  Filesystem& fs = Fs(req);
  auto inode = fs.meta().GetInode(ino);
  if (!inode.ok()) return ReplyError(req, inode.status(), "setattr");
  const control::QuotaOwner from{inode->uid, inode->gid, inode->projid};
  const control::QuotaOwner to{change.uid.value_or(inode->uid), change.gid.value_or(inode->gid),
                      inode->projid};
  // An open file's size may be ahead of the store's only by writes in
  // flight, which their own reservations cover.
  const uint64_t bytes = S_ISREG(inode->mode) ? inode->size : 0;
  auto holds = fs.quota().ReserveMove(from, to, fuse_req_ctx(req)->uid, bytes);
  if (!holds.ok()) {
    return ReplyError(req, Status::Error(holds.err(), "chown of inode " + std::to_string(ino) +
                                                          ": " + holds.status().message()),
                      "setattr");
  }
  auto stored = fs.StoreAttr(ino, change);
  if (stored.ok()) {
    if (holds->bytes) holds->bytes->Use(bytes);
    if (holds->inodes) holds->inodes->Use(1);
  }
  ReplyAttr(req, stored, "setattr");
}

void ServeSetattr(fuse_req_t req, fuse_ino_t ino, const struct stat* attr, int to_set,
                  fuse_file_info* fi) {
  Filesystem& fs = Fs(req);
  meta::AttrChange change = ChangeFrom(attr, to_set);
  // With FUSE_HANDLE_KILLPRIV_V2 (fs/fuse_channel.h) the kernel leaves the
  // clearing of set-ID bits to us and says when: chown of a non-directory,
  // truncate by a caller without CAP_FSETID. This bit is its
  // FATTR_KILL_SUIDGID.
  change.kill_setid = (to_set & FUSE_SET_ATTR_KILL_SUID) != 0;
  if (!change.size.has_value()) {
    if (!change.uid.has_value() && !change.gid.has_value()) {
      return ReplyAttr(req, fs.StoreAttr(ino, change), "setattr");
    }
    // A write in flight was reserved against the old owner but is charged
    // to whoever owns the file when its size is stored: an open file's
    // chown waits for the I/O before it and holds back the I/O after it,
    // as a truncate does.
    std::shared_ptr<OpenFile> file = fi != nullptr ? Handle(fi)->file : fs.FindOpen(ino);
    if (!file) return ChangeOwner(req, ino, change);
    const resource::OwnerId owner = fi != nullptr ? Handle(fi)->extent_owner : resource::kRootOwner;
    return WithExtent(
        file, owner, 0, resource::kWholeRange, resource::Mode::kWrite,
        [req, ino, change](std::shared_ptr<void>) { ChangeOwner(req, ino, change); }, [] {});
  }

  // A truncate by path cuts the objects before the MDS hears of it: the
  // MDS checks a squashed root first (a handle was checked at its open).
  if (fi == nullptr) {
    if (Status may = fs.CheckSquashedAccess(ino, W_OK); !may.ok()) {
      return ReplyError(req, may, "setattr");
    }
  }
  std::shared_ptr<OpenFile> file = fi != nullptr ? Handle(fi)->file : fs.FindOpen(ino);
  if (!file) return StartTruncate(req, ino, change, nullptr, nullptr);
  // An open file's truncate waits for the I/O before it and holds back the
  // I/O after it: a write credit over the whole file, through the handle
  // it came with, else the file's root owner.
  const resource::OwnerId owner = fi != nullptr ? Handle(fi)->extent_owner : resource::kRootOwner;
  WithExtent(
      file, owner, 0, resource::kWholeRange, resource::Mode::kWrite,
      [req, ino, change, file](std::shared_ptr<void> credit) {
        StartTruncate(req, ino, change, file, std::move(credit));
      },
      [] {});
}

void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
               fuse_file_info* fi) {
  std::optional<fuse_file_info> info;
  if (fi != nullptr) info = *fi;
  ThroughMdt(req, nrs::Op::kSetattr, jobstats::JobOp::kSetattr, ino,
             [req, ino, attr = *attr, to_set, info]() mutable {
               ServeSetattr(req, ino, &attr, to_set, info ? &*info : nullptr);
             });
}

}  // namespace

void AddFileOps(fuse_lowlevel_ops* ops) {
  ops->create = OpCreate;
  ops->open = OpOpen;
  ops->release = OpRelease;
  ops->flush = OpFlush;
  ops->read = OpRead;
  ops->write = OpWrite;
  ops->fsync = OpFsync;
  ops->fallocate = OpFallocate;
  ops->setattr = OpSetattr;
  ops->lseek = OpLseek;
}

}  // namespace sfs::fs
