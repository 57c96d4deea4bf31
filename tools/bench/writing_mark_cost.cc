// What a writing mark (docs/design.md, "Writes in flight") costs the
// metadata store, beside the store writes a created and written file
// already makes: Create, PutLayout (its object recorded as created) and
// NoteWrite (its size), against MarkWriting put + erase. Each figure is
// the lowest mean over 15 rounds of 2,000 files, which a loaded machine
// disturbs far less than a mount's rates (writing_mark_bench.sh runs it).
//   writing_mark_cost DIR   (DIR: a new store's directory, on the disk of
//                            the metadata; removed first if it exists)
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "meta/meta_store.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kFiles = 2000;
constexpr int kRounds = 15;

double MicrosPerFile(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double, std::micro>(end - begin).count() / kFiles;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: writing_mark_cost DIR\n");
    return 2;
  }
  std::error_code ec;
  std::filesystem::remove_all(argv[1], ec);
  auto formatted = sfs::meta::MetaStore::Format(argv[1], {});
  if (!formatted.ok()) {
    std::fprintf(stderr, "%s\n", formatted.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<sfs::meta::MetaStore> owned = std::move(formatted).value();
  sfs::meta::MetaStore& store = *owned;
  double file_us = 1e9, mark_us = 1e9;
  uint64_t next_name = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<uint64_t> inos;
    const auto begin = Clock::now();
    for (int i = 0; i < kFiles; ++i) {
      sfs::meta::NewNode node;
      node.mode = S_IFREG | 0644;
      node.layout = std::string(64, 'l');
      auto made = store.Create(sfs::meta::kRootIno, std::to_string(next_name++), node);
      if (!made.ok()) return 1;
      if (!store.PutLayout(made->ino, std::string(64, 'm'), 4096).ok()) return 1;
      if (!store.NoteWrite(made->ino, 4096, /*kill_suid=*/false).ok()) return 1;
      inos.push_back(made->ino);
    }
    const auto files_done = Clock::now();
    for (uint64_t ino : inos) {
      if (!store.MarkWriting(ino, true).ok() || !store.MarkWriting(ino, false).ok()) return 1;
    }
    const auto marks_done = Clock::now();
    file_us = std::min(file_us, MicrosPerFile(begin, files_done));
    mark_us = std::min(mark_us, MicrosPerFile(files_done, marks_done));
  }
  std::printf("store writes of a created and written file %.1f us, its writing mark (put + "
              "erase) %.1f us (%.1f %%)\n",
              file_us, mark_us, 100 * mark_us / file_us);
  owned.reset();  // closed before its files go
  std::filesystem::remove_all(argv[1], ec);
  return 0;
}
