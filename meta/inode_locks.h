// Internal to meta/: the locks that make a mutation's read-check-write
// atomic (meta_store.h, "Thread safety").
//
// A fixed array of mutexes, "stripes"; inode `ino` belongs to stripe
// ino % kStripes (inode numbers are handed out in sequence, so neighbours
// spread). A stripe guards every record kept under the numbers of its
// inodes: I<ino>, a directory's entries D<ino>..., L<ino>, X<ino>...,
// O<ino>. A mutation holds the stripe of every inode whose records it
// reads to check or writes (for a create the parent's; an unlink the
// parent's and the child's; a rename both parents', the moved inode's and
// the replaced one's) from its first read until its batch has landed and
// the usage book has it, so its checks still hold when the batch lands,
// while mutations of unrelated inodes run and write side by side.
//
// Lock order: stripes in ascending index. Held::Add takes one above every
// stripe held by waiting, and one below only if it is free that moment;
// otherwise the mutation lets all go and starts again with the whole set
// (Lock of wanted()), so no two mutations ever wait for each other in a
// cycle. LockAll, every stripe in order, is the store's exclusive mode:
// no mutation is between its reads and its usage book update.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace sfs::meta {

class InodeLocks {
 public:
  static constexpr size_t kStripes = 1024;
  static size_t StripeOf(uint64_t ino) { return static_cast<size_t>(ino % kStripes); }

  // The stripes one mutation holds; released when destroyed. One thread's.
  class Held {
   public:
    Held(Held&& other) noexcept;
    Held& operator=(Held&&) = delete;
    Held(const Held&) = delete;
    ~Held();

    // True when the stripe of `ino` is held on return (already, or taken
    // without breaking the order); false when it lies below a held stripe
    // and is busy: the caller must release this and Lock(wanted()).
    bool Add(uint64_t ino);
    // Every inode asked for so far.
    const std::vector<uint64_t>& wanted() const { return wanted_; }

   private:
    friend class InodeLocks;
    explicit Held(InodeLocks* locks) : locks_(locks) {}

    InodeLocks* locks_;
    std::vector<size_t> stripes_;  // held, ascending
    std::vector<uint64_t> wanted_;
  };

  // Waits for the stripes of `inos` (any order, repeats allowed).
  Held Lock(const std::vector<uint64_t>& inos);
  // Waits for every stripe.
  Held LockAll();

 private:
  // Padded to a cache line each: neighbouring stripes are taken by
  // unrelated mutations on other CPUs.
  struct alignas(64) Stripe {
    std::mutex mu;  // guards the records of the inodes of this stripe
  };
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace sfs::meta
