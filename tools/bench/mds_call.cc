// What one metadata call to an MDS costs, without FUSE: N GET_INODE calls
// of the root through client::MdsClient, one at a time, and the mean.
//   mds_call ADDRESS:PORT KEY_FILE [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "client/mds_client.h"
#include "rpc/meta_wire.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: mds_call ADDRESS:PORT KEY_FILE [N]\n");
    return 2;
  }
  const int n = argc > 3 ? atoi(argv[3]) : 5000;
  auto key = sfs::rpc::ReadKeyFile(argv[2]);
  if (!key.ok()) {
    fprintf(stderr, "%s\n", key.status().ToString().c_str());
    return 1;
  }
  sfs::client::MdsOptions options;
  options.address = argv[1];
  options.key = std::move(key).value();
  auto mds = sfs::client::MdsClient::Connect(std::move(options));
  if (!mds.ok()) {
    fprintf(stderr, "%s\n", mds.status().ToString().c_str());
    return 1;
  }
  auto store = sfs::client::NewRemoteMetaStore(*mds);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    if (!store->GetInode(1).ok()) return 1;
  }
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  printf("getinode_call_us %.1f\n", us / n);
  return 0;
}
