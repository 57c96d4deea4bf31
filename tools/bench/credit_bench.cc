// What an extent credit costs a request (resource/shared_manager.h): a Get
// and a Put through a handle alone on its file (granted from its cached
// whole-file credit), and through one of two handles writing their own
// ranges (a credit from the root per request, cached ones in the lists).
#include <benchmark/benchmark.h>

#include "resource/shared_manager.h"

namespace sfs::resource {
namespace {

// A Get and a Put per 1 MiB write, each at the next offset.
void WriteOneMiBAfterAnother(benchmark::State& state, SharedCreditManager& manager,
                             OwnerId owner) {
  uint64_t offset = 0;
  for (auto _ : state) {
    const Credit wanted{Kind::kExtent, 1, offset, offset + (1 << 20), Mode::kWrite};
    auto got = manager.Get(owner, wanted, {}, [](Outcome, Ticket) {}, nullptr);
    manager.Put(got.ticket);
    offset += 1 << 20;
  }
}

void BM_GetPutAlone(benchmark::State& state) {
  SharedCreditManager manager(NewExtentType(), Tunables{}, [] { return Clock::now(); });
  const OwnerId handle = manager.AddOwner("alone");
  WriteOneMiBAfterAnother(state, manager, handle);
}
BENCHMARK(BM_GetPutAlone);

void BM_GetPutBesideAnother(benchmark::State& state) {
  SharedCreditManager manager(NewExtentType(), Tunables{}, [] { return Clock::now(); });
  const OwnerId mine = manager.AddOwner("mine");
  const OwnerId other = manager.AddOwner("other");
  // The other handle has credits cached far away from ours.
  for (uint64_t i = 0; i < 16; ++i) {
    const Credit theirs{Kind::kExtent, 1, (1ull << 40) + (i << 20), (1ull << 40) + ((i + 1) << 20),
                        Mode::kWrite};
    manager.Put(manager.Get(other, theirs, {}, [](Outcome, Ticket) {}, nullptr).ticket);
  }
  WriteOneMiBAfterAnother(state, manager, mine);
}
BENCHMARK(BM_GetPutBesideAnother);

}  // namespace
}  // namespace sfs::resource

BENCHMARK_MAIN();
