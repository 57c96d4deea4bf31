// gRPC side of the RPC choice benchmark.
//   grpc_rpc server --addr 127.0.0.1:P --mode proto|bb
//   grpc_rpc client --addr 127.0.0.1:P --mode proto|bb --server-pid PID --variant NAME [...]
//
// Server: callback API (gRPC runs the handlers on its own threads; the
// result line reports how many the process had). Client: one thread
// driving a CompletionQueue with `conc` calls outstanding on one channel,
// the same shape as the single-threaded Cap'n Proto client.
//
// --mode proto: the generated protobuf types throughout, the way most code
//   would use gRPC. User-space copies of the payload, write: app buffer ->
//   request string (set_data), string -> grpc slices (serialize), slices ->
//   string on the server (parse) = 3; read: the same 3 the other way.
// --mode bb: grpc::ByteBuffer on both sides (generic stub, raw callback
//   methods). The bytes field is written last, as its own static slice that
//   points at the payload, and read in place from the received slices, so
//   the payload is never copied in user space by this code (the kernel's
//   two loopback copies remain in both modes and in Cap'n Proto).

#include <google/protobuf/io/coded_stream.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include <algorithm>

#include "common.h"
#include "rpc_choice.grpc.pb.h"

namespace rc = rpc_choice;
using rc::Clock;

namespace {

constexpr char kWriteMethod[] = "/rpc_choice.ObjectStore/Write";
constexpr char kReadMethod[] = "/rpc_choice.ObjectStore/Read";
constexpr int kWriteDataField = 3;  // WriteRequest.data
constexpr int kReadDataField = 2;   // ReadReply.data

// --- the wire format by hand, for the bulk messages of --mode bb ---------

// head (the message with its bytes field empty) followed by the bytes field:
// valid protobuf encoding, since fields may come in any order.
template <class Head>
grpc::ByteBuffer EncodeWithData(const Head& head, int field, const uint8_t* data, size_t n) {
  std::string h = head.SerializeAsString();
  uint8_t tl[16];
  using google::protobuf::io::CodedOutputStream;
  uint8_t* end = CodedOutputStream::WriteTagToArray(field << 3 | 2, tl);
  end = CodedOutputStream::WriteVarint64ToArray(n, end);
  h.append(reinterpret_cast<char*>(tl), end - tl);
  grpc::Slice s[2] = {grpc::Slice(h), grpc::Slice(data, n, grpc::Slice::STATIC_SLICE)};
  return grpc::ByteBuffer(s, 2);
}

// Where the bytes field lies in a received buffer, without copying it.
struct InPlace {
  std::vector<grpc::Slice> slices;
  size_t off = 0, len = 0;
  uint8_t At(size_t i) const {
    i += off;
    for (const auto& s : slices) {
      if (i < s.size()) return s.begin()[i];
      i -= s.size();
    }
    return 0;
  }
};

// Accepts what EncodeWithData writes: varint fields, then the bytes field
// last (absent if empty).
template <class Head>
bool DecodeWithData(const grpc::ByteBuffer& bb, int field, Head* head, InPlace* d) {
  if (!bb.Dump(&d->slices).ok()) return false;
  uint8_t flat[64];  // the head is at most ~35 bytes
  size_t got = 0;
  for (const auto& s : d->slices) {
    size_t k = std::min(sizeof flat - got, s.size());
    std::memcpy(flat + got, s.begin(), k);
    if ((got += k) == sizeof flat) break;
  }
  google::protobuf::io::CodedInputStream in(flat, static_cast<int>(got));
  for (;;) {
    const int tag_pos = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0)  // no bytes field: the head must be the whole message
      return got == bb.Length() && head->ParseFromArray(flat, static_cast<int>(got));
    if (tag == static_cast<uint32_t>(field << 3 | 2)) {
      uint64_t len;
      if (!in.ReadVarint64(&len)) return false;
      d->off = in.CurrentPosition();
      d->len = len;
      return d->off + d->len == bb.Length() && head->ParseFromArray(flat, tag_pos);
    }
    uint64_t v;
    if ((tag & 7) != 0 || !in.ReadVarint64(&v)) return false;
  }
}

template <class Msg>
grpc::ByteBuffer Encode(const Msg& m) {
  grpc::ByteBuffer bb;
  bool own;
  grpc::SerializationTraits<Msg>::Serialize(m, &bb, &own);
  return bb;
}

template <class Msg>
bool Decode(const grpc::ByteBuffer& bb, Msg* m) {
  grpc::ByteBuffer copy(bb);  // Deserialize consumes its argument; this is a ref, not a copy
  return grpc::SerializationTraits<Msg>::Deserialize(&copy, m).ok();
}

// --- server --------------------------------------------------------------

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* ctx, grpc::Status st) {
  auto* r = ctx->DefaultReactor();
  r->Finish(st);
  return r;
}

class ProtoService final : public rc::ObjectStore::CallbackService {
  grpc::ServerUnaryReactor* Write(grpc::CallbackServerContext* ctx, const rc::WriteRequest* req,
                                  rc::WriteReply* rep) override {
    const std::string& d = req->data();
    if (!d.empty()) rc::Touch(d.front(), d.back());
    rep->set_bytes(d.size());
    return Done(ctx, grpc::Status::OK);
  }
  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* ctx, const rc::ReadRequest* req,
                                 rc::ReadReply* rep) override {
    rep->set_data(rc::Payload(), std::min<uint64_t>(req->length(), rc::kMaxPayload));
    return Done(ctx, grpc::Status::OK);
  }
};

using RawBase = rc::ObjectStore::WithRawCallbackMethod_Write<
    rc::ObjectStore::WithRawCallbackMethod_Read<rc::ObjectStore::CallbackService>>;

class RawService final : public RawBase {
  grpc::ServerUnaryReactor* Write(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
                                  grpc::ByteBuffer* rep) override {
    rc::WriteRequest head;
    InPlace d;
    if (!DecodeWithData(*req, kWriteDataField, &head, &d))
      return Done(ctx, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad WriteRequest"));
    if (d.len) rc::Touch(d.At(0), d.At(d.len - 1));
    rc::WriteReply r;
    r.set_bytes(d.len);
    *rep = Encode(r);
    return Done(ctx, grpc::Status::OK);
  }
  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
                                 grpc::ByteBuffer* rep) override {
    rc::ReadRequest r;
    if (!Decode(*req, &r))
      return Done(ctx, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad ReadRequest"));
    size_t n = std::min<uint64_t>(r.length(), rc::kMaxPayload);
    *rep = EncodeWithData(rc::ReadReply(), kReadDataField, rc::Payload(), n);
    return Done(ctx, grpc::Status::OK);
  }
};

int Server(const rc::Options& o) {
  ProtoService proto;
  RawService raw;
  grpc::ServerBuilder b;
  b.AddListeningPort(o.addr, grpc::InsecureServerCredentials());
  b.SetMaxReceiveMessageSize(rc::kMaxMessage);
  b.SetMaxSendMessageSize(rc::kMaxMessage);
  b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);  // a stale server must make us fail, not share
  if (o.mode == "bb")
    b.RegisterService(&raw);
  else
    b.RegisterService(&proto);
  auto server = b.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "grpc server: cannot listen on %s\n", o.addr.c_str());
    return 1;
  }
  std::printf("ready %d\n", getpid());
  std::fflush(stdout);
  server->Wait();  // until killed
  return 0;
}

// --- client --------------------------------------------------------------

template <class Reply>
struct Slot {
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientAsyncResponseReader<Reply>> rpc;
  Reply reply;
  grpc::Status status;
  Clock::time_point start;
};

// start(ctx, cq) prepares one call; check(reply) validates and touches it.
template <class Reply, class Start, class Check>
rc::Tally Drive(grpc::CompletionQueue* cq, int conc, Clock::time_point deadline, long max_calls,
                Start start, Check check) {
  std::vector<Slot<Reply>> slots(conc);
  rc::Tally t;
  long issued = 0;
  int outstanding = 0;
  auto issue = [&](size_t i) {
    Slot<Reply>& s = slots[i];
    s.ctx = std::make_unique<grpc::ClientContext>();  // not reusable across calls
    s.reply.Clear();
    s.start = Clock::now();
    s.rpc = start(s.ctx.get(), cq);
    s.rpc->StartCall();
    s.rpc->Finish(&s.reply, &s.status, reinterpret_cast<void*>(i));
    ++issued;
    ++outstanding;
  };
  for (int i = 0; i < conc && issued < max_calls; ++i) issue(i);
  void* tag;
  bool ok;
  while (outstanding > 0 && cq->Next(&tag, &ok)) {
    --outstanding;
    auto i = reinterpret_cast<size_t>(tag);
    Slot<Reply>& s = slots[i];
    if (!ok || !s.status.ok() || !check(s.reply)) {
      std::fprintf(stderr, "grpc call failed: %s\n", s.status.error_message().c_str());
      std::exit(1);
    }
    t.lat_sum_us += rc::UsSince(s.start);
    ++t.calls;
    if (issued < max_calls && Clock::now() < deadline) issue(i);
  }
  return t;
}

int Client(const rc::Options& o) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(rc::kMaxMessage);
  args.SetMaxSendMessageSize(rc::kMaxMessage);
  auto ch = grpc::CreateCustomChannel(o.addr, grpc::InsecureChannelCredentials(), args);
  if (!ch->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "grpc client: cannot connect to %s\n", o.addr.c_str());
    return 1;
  }
  auto stub = rc::ObjectStore::NewStub(ch);
  grpc::GenericStub generic(ch);
  grpc::CompletionQueue cq;
  const bool bb = o.mode == "bb";

  for (const rc::Case& c : rc::Cases()) {
    rc::WriteRequest wreq;
    wreq.set_object_id(1);
    wreq.set_offset(4096);
    rc::ReadRequest rreq;
    rreq.set_object_id(1);
    rreq.set_offset(4096);
    rreq.set_length(c.size);
    const grpc::ByteBuffer rreq_bb = Encode(rreq);

    auto drive = [&](const rc::Case& c, Clock::time_point deadline, long max_calls) {
      if (c.write && bb)
        return Drive<grpc::ByteBuffer>(
            &cq, c.conc, deadline, max_calls,
            [&](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
              return generic.PrepareUnaryCall(
                  ctx, kWriteMethod, EncodeWithData(wreq, kWriteDataField, rc::Payload(), c.size),
                  cq);
            },
            [&](const grpc::ByteBuffer& r) {
              rc::WriteReply rep;
              return Decode(r, &rep) && rep.bytes() == c.size;
            });
      if (c.write)
        return Drive<rc::WriteReply>(
            &cq, c.conc, deadline, max_calls,
            [&](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
              wreq.set_data(rc::Payload(), c.size);  // the app's buffer into the message
              return stub->PrepareAsyncWrite(ctx, wreq, cq);
            },
            [&](const rc::WriteReply& r) { return r.bytes() == c.size; });
      if (bb)
        return Drive<grpc::ByteBuffer>(
            &cq, c.conc, deadline, max_calls,
            [&](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
              return generic.PrepareUnaryCall(ctx, kReadMethod, rreq_bb, cq);
            },
            [&](const grpc::ByteBuffer& r) {
              rc::ReadReply head;
              InPlace d;
              if (!DecodeWithData(r, kReadDataField, &head, &d) || d.len != c.size) return false;
              rc::Touch(d.At(0), d.At(d.len - 1));
              return true;
            });
      return Drive<rc::ReadReply>(
          &cq, c.conc, deadline, max_calls,
          [&](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
            return stub->PrepareAsyncRead(ctx, rreq, cq);
          },
          [&](const rc::ReadReply& r) {
            if (r.data().size() != c.size) return false;
            rc::Touch(r.data().front(), r.data().back());
            return true;
          });
    };
    rc::Measure(o, c, drive);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s server|client --addr 127.0.0.1:PORT [options]\n", argv[0]);
    return 2;
  }
  rc::Options o = rc::ParseOptions(argc, argv, 2);
  if (o.mode != "proto" && o.mode != "bb") {
    std::fprintf(stderr, "--mode proto|bb\n");
    return 2;
  }
  return std::string(argv[1]) == "server" ? Server(o) : Client(o);
}
