// Cap'n Proto side of the RPC choice benchmark.
//   capnp_rpc server --addr 127.0.0.1:P --mode copy|ref
//   capnp_rpc client --addr 127.0.0.1:P --mode copy|ref --server-pid PID --variant NAME [...]
//
// Standard capnp RPC over EzRpcServer/EzRpcClient (TwoPartyVatNetwork):
// one kj event loop, one thread, on each side. Concurrency 8 is 8 requests
// in flight on the one connection, each answered out of its own promise.
//
// --mode copy: setData(), the idiomatic way: one user-space copy of the
//   payload into the message by the sender; the receiver reads the Data in
//   place in the received message (no copy).
// --mode ref: the sender adopts Orphanage::referenceExternalData() instead,
//   making the payload a segment of its own that is written out as is:
//   no user-space copy at all (the kernel's two loopback copies remain).

#include <capnp/ez-rpc.h>
#include <kj/async.h>
#include <kj/vector.h>

#include <algorithm>
#include <functional>

#include "common.h"
#include "rpc_choice.capnp.h"

namespace rc = rpc_choice;
using rc::Clock;

namespace {

kj::ArrayPtr<const kj::byte> PayloadOf(size_t n) { return kj::arrayPtr(rc::Payload(), n); }

// Both sides accept the same message size as the gRPC ones.
capnp::ReaderOptions Limits() {
  capnp::ReaderOptions ro;
  ro.traversalLimitInWords = rc::kMaxMessage / sizeof(capnp::word);
  return ro;
}

// The data field of `b`, filled either way.
template <class Builder>
void SetData(Builder b, size_t n, bool ref) {
  if (ref)
    b.adoptData(capnp::Orphanage::getForMessageContaining(b).referenceExternalData(PayloadOf(n)));
  else
    b.setData(PayloadOf(n));
}

// A first segment big enough for the payload, so a copy is made once.
capnp::MessageSize Hint(size_t n) { return {n / sizeof(capnp::word) + 16, 0}; }

class Store final : public ObjectStore::Server {
 public:
  explicit Store(bool ref) : ref_(ref) {}

 protected:
  kj::Promise<void> write(WriteContext ctx) override {
    capnp::Data::Reader d = ctx.getParams().getData();
    if (d.size()) rc::Touch(d[0], d[d.size() - 1]);
    ctx.getResults().setBytes(d.size());
    return kj::READY_NOW;
  }
  kj::Promise<void> read(ReadContext ctx) override {
    size_t n = std::min<uint64_t>(ctx.getParams().getLength(), rc::kMaxPayload);
    SetData(ctx.getResults(Hint(ref_ ? 0 : n)), n, ref_);
    return kj::READY_NOW;
  }

 private:
  bool ref_;
};

int Server(const rc::Options& o) {
  capnp::EzRpcServer server(kj::heap<Store>(o.mode == "ref"), o.addr, 0, Limits());
  auto& ws = server.getWaitScope();
  server.getPort().wait(ws);  // listening from here on
  std::printf("ready %d\n", getpid());
  std::fflush(stdout);
  kj::NEVER_DONE.wait(ws);  // until killed
}

int Client(const rc::Options& o) {
  capnp::EzRpcClient client(o.addr, 0, Limits());
  auto& ws = client.getWaitScope();
  ObjectStore::Client store = client.getMain<ObjectStore>();
  const bool ref = o.mode == "ref";

  auto drive = [&](const rc::Case& c, Clock::time_point deadline, long max_calls) {
    rc::Tally t;
    long issued = 0;
    // One chain of calls per outstanding slot: each reply issues the next.
    std::function<kj::Promise<void>()> next = [&]() -> kj::Promise<void> {
      if (issued >= max_calls || Clock::now() >= deadline) return kj::READY_NOW;
      ++issued;
      const auto start = Clock::now();
      auto done = [&t, start] {
        t.lat_sum_us += rc::UsSince(start);
        ++t.calls;
      };
      if (c.write) {
        auto req = store.writeRequest(Hint(ref ? 0 : c.size));
        req.setObjectId(1);
        req.setOffset(4096);
        SetData(ObjectStore::WriteParams::Builder(req), c.size, ref);
        return req.send().then([&, done](capnp::Response<ObjectStore::WriteResults>&& r) {
          KJ_REQUIRE(r.getBytes() == c.size);
          done();
          return next();
        });
      }
      auto req = store.readRequest();
      req.setObjectId(1);
      req.setOffset(4096);
      req.setLength(c.size);
      return req.send().then([&, done](capnp::Response<ObjectStore::ReadResults>&& r) {
        capnp::Data::Reader d = r.getData();
        KJ_REQUIRE(d.size() == c.size);
        rc::Touch(d[0], d[d.size() - 1]);
        done();
        return next();
      });
    };
    kj::Vector<kj::Promise<void>> slots;
    for (int i = 0; i < c.conc; ++i) slots.add(next());
    kj::joinPromises(slots.releaseAsArray()).wait(ws);
    return t;
  };
  for (const rc::Case& c : rc::Cases()) rc::Measure(o, c, drive);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s server|client --addr 127.0.0.1:PORT [options]\n", argv[0]);
    return 2;
  }
  rc::Options o = rc::ParseOptions(argc, argv, 2);
  if (o.mode != "copy" && o.mode != "ref") {
    std::fprintf(stderr, "--mode copy|ref\n");
    return 2;
  }
  return std::string(argv[1]) == "server" ? Server(o) : Client(o);
}
