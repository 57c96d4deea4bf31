// An OSS (oss/server.h) and a remote OST (client/remote_ost.h) in one test
// process, talking over a real TCP socket on 127.0.0.1: requests reach the
// OSS's OST and its objects, the key is required for every call, and an OST
// is only served under its own label.
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "client/remote_ost.h"
#include "nrs/crrn_weights.h"
#include "nrs/epoch_data.h"
#include "nrs/epoch_hub.h"
#include "nrs/registry.h"
#include "nrs/tbf_rules.h"
#include "oss/server.h"
#include <grpcpp/generic/generic_stub.h>

#include "rpc/bulk.h"
#include "rpc/oss.grpc.pb.h"
#include "rpc/wire.h"

namespace sfs {
namespace {

namespace stdfs = std::filesystem;

class Waiter : public ost::IoObserver {
 public:
  void PartDone(ost::IoRequest& request, const Status& status, size_t bytes) override {
    std::lock_guard lock(mu_);
    status_ = status;
    bytes_ = bytes;
    exists_ = request.object_exists;
    seek_ = request.seek_result;
    done_ = true;
    cv_.notify_all();
  }
  // The request's outcome (EIO... on a timeout of 30 s).
  Status Wait() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(30), [&] { return done_; })) {
      return Status::Error(ETIMEDOUT, "no completion");
    }
    done_ = false;
    return status_;
  }
  size_t bytes() const { return bytes_; }
  bool exists() const { return exists_; }
  std::optional<uint64_t> seek() const { return seek_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Status status_;
  size_t bytes_ = 0;
  bool exists_ = false;
  std::optional<uint64_t> seek_;
};

class RemoteOstTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/sfs-oss-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    dir_ = root_ + "/ost";
    stdfs::create_directory(dir_);
    oss::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.key = key_;
    options.dirs = {dir_};
    auto server = oss::StartServer(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    address_ = {"127.0.0.1:" + std::to_string(server_->port()), dir_};
    ASSERT_TRUE(client::LabelRemoteOst(address_, key_, {}, "fs-1", 3, "ost-3", false, false).ok());
  }
  void TearDown() override {
    remote_.reset();
    server_.reset();
    stdfs::remove_all(root_);
  }
  void Connect(std::shared_ptr<nrs::EpochHub> epochs = nullptr) {
    auto remote =
        client::ConnectRemoteOst({3, address_, "fs-1", "ost-3", key_, {}, nullptr, epochs});
    ASSERT_TRUE(remote.ok()) << remote.status().ToString();
    remote_ = std::move(remote).value();
  }
  // Connects and has the OSS run TBF with `rule` on the regular head.
  void ConnectUnderTbf(const std::string& rule);
  // A write of `length` bytes (`data`, unless the caller sends them apart)
  // to `object` of this OST, as a call made by hand.
  rpc::IoCall RawWrite(uint64_t object, uint64_t length, const std::string& data = "") const {
    rpc::IoCall call;
    call.mutable_ost()->set_dir(dir_);
    call.mutable_ost()->set_fs_uuid("fs-1");
    call.mutable_ost()->set_ost_uuid("ost-3");
    call.mutable_ost()->set_index(3);
    call.set_op(static_cast<uint32_t>(nrs::Op::kWrite));
    call.set_object_id(object);
    call.set_length(length);
    call.set_data(data);
    return call;
  }
  // Opens `session` (made with the key) on the OSS by hand.
  static void OpenSession(rpc::Oss::Stub& stub, rpc::ClientSession& session) {
    grpc::ClientContext context;
    rpc::HelloRequest hello;
    hello.set_client_nonce(session.client_nonce());
    rpc::HelloReply opened;
    ASSERT_TRUE(stub.Hello(&context, hello, &opened).ok());
    ASSERT_TRUE(session.Open(opened.session(), opened.server_nonce()).ok());
  }
  // Submits one request and waits for it.
  Status Run(nrs::Op op, uint64_t object, uint64_t offset, std::string* buffer,
             uint64_t length = 0) {
    auto request = std::make_unique<ost::IoRequest>();
    request->info.op = op;
    request->info.offset = offset;
    request->info.length = buffer != nullptr ? buffer->size() : length;
    request->info.uid = 1000;
    request->info.jobid = std::make_shared<const std::string>("job.7");
    request->object = remote_->Object(object);
    if (buffer != nullptr) request->iov.push_back({buffer->data(), buffer->size()});
    if (op == nrs::Op::kTruncate) request->truncate_size = length;
    request->observer = &waiter_;
    remote_->Submit(std::move(request));
    return waiter_.Wait();
  }
  std::string ObjectFile(uint64_t id) const {
    std::ostringstream name;
    name << dir_ << "/objects/" << std::hex << std::setw(2) << std::setfill('0') << (id & 0xff)
         << "/" << std::setw(16) << id;
    return name.str();
  }

  const rpc::Key key_{"a key that is long enough"};
  std::string root_, dir_;
  std::unique_ptr<oss::Server> server_;
  client::OssAddress address_;
  std::unique_ptr<ost::Service> remote_;
  Waiter waiter_;
};

TEST_F(RemoteOstTest, WritesAndReadsReachTheOssObjects) {
  Connect();
  std::string data(300000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 999);
  ASSERT_TRUE(Run(nrs::Op::kWrite, 0x1234, 4096, &data).ok());
  EXPECT_EQ(waiter_.bytes(), data.size());
  EXPECT_TRUE(waiter_.exists());
  // The object is a file on the OSS's OST directory, with the bytes at
  // their offset.
  std::ifstream file(ObjectFile(0x1234), std::ios::binary);
  ASSERT_TRUE(file.good()) << ObjectFile(0x1234);
  std::string stored((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_EQ(stored.size(), 4096 + data.size());
  EXPECT_EQ(stored.substr(4096), data);
  EXPECT_EQ(stored.substr(0, 4096), std::string(4096, '\0'));

  std::string back(data.size() + 8192, 'x');  // past the end reads as zeros
  ASSERT_TRUE(Run(nrs::Op::kRead, 0x1234, 4096, &back).ok());
  EXPECT_EQ(back.substr(0, data.size()), data);
  EXPECT_EQ(back.substr(data.size()), std::string(8192, '\0'));

  ASSERT_TRUE(Run(nrs::Op::kTruncate, 0x1234, 0, nullptr, 100).ok());
  EXPECT_EQ(stdfs::file_size(ObjectFile(0x1234)), 100u);
  ASSERT_TRUE(Run(nrs::Op::kDestroy, 0x1234, 0, nullptr).ok());
  EXPECT_FALSE(stdfs::exists(ObjectFile(0x1234)));
  // Job stats of the remote OST count what it served, by job id.
  auto jobs = remote_->job_stats().Snapshot(nrs::Clock::now());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job_id, "job.7");
}

TEST_F(RemoteOstTest, SpaceAndHealthComeFromTheOss) {
  Connect();
  // The OSS samples its OST in the background, from its start; the status
  // thread brings the sample within a poll or two.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!remote_->LastSpace().space && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const ost::SpaceSample sample = remote_->LastSpace();
  ASSERT_TRUE(sample.space.has_value());
  EXPECT_GT(sample.space->total_blocks, 0u);
  EXPECT_TRUE(remote_->responsive());
  EXPECT_EQ(remote_->backend().Describe(), "oss://" + address_.address + dir_);
}

TEST_F(RemoteOstTest, AWrongKeyIsRefusedAtConnectAndNothingIsWritten) {
  auto remote = client::ConnectRemoteOst({3, address_, "fs-1", "ost-3", rpc::Key{"not the key, but as long"}});
  ASSERT_FALSE(remote.ok());
  EXPECT_EQ(remote.err(), EACCES);
  EXPECT_EQ(client::LabelRemoteOst(address_, rpc::Key{"not the key, but as long"}, {}, "fs-2", 0,
                                   "x", /*force=*/true, false)
                .err(),
            EACCES);
  // The label is still the first filesystem's.
  std::ifstream label(dir_ + "/.stripefs-ost");
  std::string text((std::istreambuf_iterator<char>(label)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("fs_uuid=fs-1"), std::string::npos);
}

TEST_F(RemoteOstTest, ACallWithoutProofIsUnauthenticatedAndChangesNothing) {
  auto stub = rpc::Oss::NewStub(
      grpc::CreateChannel(address_.address, grpc::InsecureChannelCredentials()));
  const rpc::IoCall call = RawWrite(0x77, 5, "hello");
  grpc::ClientContext context;
  rpc::IoReply reply;
  grpc::Status status = stub->Io(&context, call, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_FALSE(stdfs::exists(ObjectFile(0x77)));
  // A signature made with a session but for other fields is refused too:
  // the caller cannot change what it asks for after signing.
  rpc::ClientSession session(key_);
  OpenSession(*stub, session);
  grpc::ClientContext signed_context;
  rpc::IoCall other = call;
  other.set_object_id(0x78);
  rpc::SignCall(session, signed_context, rpc::kIoMethod, rpc::IoCallFields(other));
  status = stub->Io(&signed_context, call, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_FALSE(stdfs::exists(ObjectFile(0x77)));
}

TEST_F(RemoteOstTest, ABulkCallWithoutProofIsUnauthenticatedAndWritesNothing) {
  auto channel = grpc::CreateChannel(address_.address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  const rpc::IoCall call = RawWrite(0x99, rpc::kBulkBytes);
  const std::string data(rpc::kBulkBytes, 'z');
  const grpc::ByteBuffer message =
      rpc::EncodeBulk(call, {grpc::Slice(data.data(), data.size())});
  // Unsigned, then signed by a session of the key but as an Io call (the
  // method is under the signature).
  for (int signed_as_io = 0; signed_as_io < 2; ++signed_as_io) {
    grpc::ClientContext context;
    rpc::ClientSession session(key_);
    if (signed_as_io) {
      auto io_stub = rpc::Oss::NewStub(channel);
      OpenSession(*io_stub, session);
      rpc::SignCall(session, context, rpc::kIoMethod, rpc::IoCallFields(call, data.size()));
    }
    grpc::ByteBuffer reply;
    std::mutex mu;
    std::condition_variable cv;
    std::optional<grpc::Status> status;
    stub.UnaryCall(&context, rpc::kIoBulkPath, grpc::StubOptions(), &message, &reply,
                   [&](grpc::Status s) {
                     std::lock_guard lock(mu);
                     status = s;
                     cv.notify_one();
                   });
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return status.has_value(); });
    EXPECT_EQ(status->error_code(), grpc::StatusCode::UNAUTHENTICATED) << signed_as_io;
  }
  EXPECT_FALSE(stdfs::exists(ObjectFile(0x99)));
}

TEST_F(RemoteOstTest, AnEpochsStreamWithoutProofIsRefusedBeforeAnythingIsRead) {
  auto stub = rpc::Oss::NewStub(
      grpc::CreateChannel(address_.address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->Epochs(&context);
  rpc::EpochFromOss message;
  // Nothing written: the OSS answers from the metadata alone.
  EXPECT_FALSE(stream->Read(&message));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(RemoteOstTest, AnOstUnderAnotherLabelIsRefusedWithTheReason) {
  auto remote = client::ConnectRemoteOst({3, address_, "fs-other", "ost-3", key_});
  ASSERT_FALSE(remote.ok());
  EXPECT_EQ(remote.err(), EIO);
  EXPECT_NE(remote.status().message().find("fs-1"), std::string::npos)
      << remote.status().message();
  auto missing = client::ConnectRemoteOst({3, {address_.address, root_ + "/elsewhere"}, "fs-1",
                                           "ost-3", key_, {}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.err(), ENOENT);
}

TEST_F(RemoteOstTest, MkfsMayNotRelabelAnotherFilesystemsOstWithoutForce) {
  EXPECT_EQ(client::LabelRemoteOst(address_, key_, {}, "fs-2", 0, "x", /*force=*/false, true).err(),
            EEXIST);
  EXPECT_TRUE(client::LabelRemoteOst(address_, key_, {}, "fs-2", 0, "x", /*force=*/true, true).ok());
}

// Waits (10 s at most) for `done`.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The primary policy the OSS runs on `head` of the remote OST, as its
// nrs_stats say ("" if none or no answer).
std::string PrimaryOnOss(const ost::Service& remote, nrs::Head head) {
  for (const nrs::PolicyStatus& policy : remote.PolicyStatus(head, {})) {
    if (policy.primary && policy.state == nrs::PolicyState::kStarted) return policy.name;
  }
  return "";
}

nrs::TargetSettings TbfSettings(const std::string& rule) {
  nrs::TargetSettings settings;
  settings.specs[0] = "tbf";
  for (nrs::Tunables& tunables : settings.tunables) {
    tunables.crrn_weights = nrs::CrrnWeights::Empty();
    tunables.tbf_rules = nrs::TbfRuleSet::Empty();
  }
  settings.tunables[0].tbf_rules = *nrs::TbfRuleSet::Empty()->Apply(rule);
  return settings;
}

void RemoteOstTest::ConnectUnderTbf(const std::string& rule) {
  Connect();
  ASSERT_TRUE(Eventually([&] { return remote_->responsive(); }));
  remote_->Apply({}, TbfSettings(rule), nrs::BuiltinPolicies());
  ASSERT_EQ(PrimaryOnOss(*remote_, nrs::Head::kRegular), "tbf");
}

TEST_F(RemoteOstTest, NrsSettingsRunOnTheOssAndItsNrsStatsComeBack) {
  Connect();
  ASSERT_TRUE(Eventually([&] { return remote_->responsive() && remote_->LastSpace().space; }));
  const nrs::PolicyRegistry registry = nrs::BuiltinPolicies();
  const nrs::TargetSettings fifo;
  const nrs::TargetSettings tbf = TbfSettings("start u1000 uid={1000} rate=5000");
  remote_->Apply(fifo, tbf, registry);
  EXPECT_EQ(remote_->PrimaryName(nrs::Head::kRegular), "tbf");
  EXPECT_EQ(PrimaryOnOss(*remote_, nrs::Head::kRegular), "tbf");
  EXPECT_EQ(PrimaryOnOss(*remote_, nrs::Head::kHighPriority), "");
  // A request of uid 1000 passes the OSS's TBF, in the class of its uid.
  std::string data(4096, 'a');
  ASSERT_TRUE(Run(nrs::Op::kWrite, 0x55, 0, &data).ok());
  bool counted = false;
  for (const nrs::PolicyStatus& policy : remote_->PolicyStatus(nrs::Head::kRegular, {}, true)) {
    if (policy.name != "tbf") continue;
    EXPECT_EQ(policy.stats.completed, 1u);
    for (const nrs::ClassStats& c : policy.classes) {
      if (c.name.find("1000") != std::string::npos && c.requests == 1 && c.wait.count() == 1) {
        counted = true;
      }
    }
  }
  EXPECT_TRUE(counted);
  EXPECT_GE(remote_->HeadStats(nrs::Head::kRegular).dequeued, 1u);

  // A policy the OSS cannot start is refused whole: it keeps running TBF.
  nrs::TargetSettings unknown = tbf;
  unknown.specs[0] = "no-such-policy";
  remote_->Apply(tbf, unknown, registry);
  EXPECT_EQ(PrimaryOnOss(*remote_, nrs::Head::kRegular), "tbf");
  // Back to fifo.
  remote_->Apply(unknown, fifo, registry);
  EXPECT_TRUE(Eventually([&] { return PrimaryOnOss(*remote_, nrs::Head::kRegular).empty(); }));
}

// Records which requests finished, in order (by tag).
class Recorder : public ost::IoObserver {
 public:
  void PartDone(ost::IoRequest& request, const Status& status, size_t) override {
    std::lock_guard lock(mu_);
    done_.push_back({request.tag, status.err()});
    cv_.notify_all();
  }
  // Waits (`patience` at most) until `n` have finished; what they were.
  std::vector<std::pair<uint64_t, int>> WaitFor(
      size_t n, std::chrono::milliseconds patience = std::chrono::seconds(30)) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, patience, [&] { return done_.size() >= n; });
    return done_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<uint64_t, int>> done_;
};

TEST_F(RemoteOstTest, QueuedRequestsOnTheOssAreRaisedAndCancelledFromTheMount) {
  // uid 1000 at 1 request/s on the OSS (a burst of 3 first).
  ConnectUnderTbf("start slow uid={1000} rate=1");
  Recorder recorder;
  std::vector<std::string> buffers(6);
  std::vector<ost::IoRequest*> requests;
  auto submit = [&](uint64_t i) {
    buffers[i] = std::string(4096, static_cast<char>('a' + i));
    auto request = std::make_unique<ost::IoRequest>();
    request->info.op = nrs::Op::kWrite;
    request->info.offset = i * 4096;
    request->info.length = 4096;
    request->info.uid = 1000;
    request->object = remote_->Object(0x66);
    request->iov.push_back({buffers[i].data(), buffers[i].size()});
    request->observer = &recorder;
    request->tag = i;
    requests.push_back(request.get());
    remote_->Submit(std::move(request));
  };
  // What the OSS's TBF holds now.
  auto queued_on_oss = [&] {
    for (const nrs::PolicyStatus& policy : remote_->PolicyStatus(nrs::Head::kRegular, {})) {
      if (policy.name == "tbf") return policy.stats.queued;
    }
    return uint64_t{0};
  };
  for (uint64_t i = 0; i < 3; ++i) submit(i);
  ASSERT_EQ(recorder.WaitFor(3).size(), 3u);
  // Submitted calls may reach the OSS in any order: each of the next three
  // is queued there before the next is sent, so the TBF holds 3, 4, 5.
  for (uint64_t i = 3; i < 6; ++i) {
    submit(i);
    ASSERT_TRUE(Eventually([&] { return queued_on_oss() == i - 2; })) << i;
  }
  // The last is taken back, unserved; the fifth is raised past the fourth.
  std::unique_ptr<ost::IoRequest> taken;
  ASSERT_TRUE(remote_->Cancel(*requests[5]));
  taken.reset(requests[5]);  // ours again
  remote_->Raise(*requests[4]);
  const auto done = recorder.WaitFor(5);
  ASSERT_EQ(done.size(), 5u);
  EXPECT_EQ(done[3].first, 4u) << "the raised request went first";
  EXPECT_EQ(done[4].first, 3u);
  for (const auto& [tag, err] : done) EXPECT_EQ(err, 0) << tag;
  // The cancelled write never reached the object; the others did.
  std::ifstream file(ObjectFile(0x66), std::ios::binary);
  std::string stored((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(stored.size(), 5u * 4096);
  EXPECT_EQ(stored.substr(4 * 4096, 4096), buffers[4]);
  // Its observer never hears of the cancelled one (at 1/s it would have
  // been served a second after the others).
  EXPECT_EQ(recorder.WaitFor(6, std::chrono::milliseconds(1500)).size(), 5u);
}

// A raise that overtakes its call (sent while a large call still arrives)
// is kept by the OSS and applied when the call comes.
TEST_F(RemoteOstTest, ARaiseBeforeItsCallIsKeptForIt) {
  ConnectUnderTbf("start slow uid={1000} rate=1");
  auto stub = rpc::Oss::NewStub(
      grpc::CreateChannel(address_.address, grpc::InsecureChannelCredentials()));
  rpc::ClientSession session(key_);
  OpenSession(*stub, session);
  // uid 1000's burst spent, so its next request waits in TBF.
  std::string block(4096, 'b');
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Run(nrs::Op::kWrite, 0x76, 0, &block).ok());
  const uint64_t hp_before = remote_->HeadStats(nrs::Head::kHighPriority).dequeued;
  {
    rpc::SteerCall steer;
    steer.set_request_id(77);
    grpc::ClientContext context;
    rpc::SignCall(session, context, rpc::kSteerMethod, rpc::SteerCallFields(steer));
    rpc::SteerReply reply;
    ASSERT_TRUE(stub->Steer(&context, steer, &reply).ok());
  }
  rpc::IoCall call = RawWrite(0x77, 5, "hello");
  call.mutable_caller()->set_uid(1000);
  call.mutable_caller()->set_jobid("job.7");  // Run's class (TBF keeps a bucket per class)
  call.set_request_id(77);
  grpc::ClientContext context;
  rpc::SignCall(session, context, rpc::kIoMethod, rpc::IoCallFields(call));
  rpc::IoReply reply;
  ASSERT_TRUE(stub->Io(&context, call, &reply).ok());
  EXPECT_EQ(reply.err(), 0) << reply.message();
  // It was served by the high-priority head, where a raise puts it.
  EXPECT_EQ(remote_->HeadStats(nrs::Head::kHighPriority).dequeued, hp_before + 1);
}

TEST_F(RemoteOstTest, AnOssThatRestartedGetsTheSettingsAgain) {
  ConnectUnderTbf("start u7 uid={7} rate=100");
  // The OSS stops and starts again on its port: it runs fifo until the
  // mount's status thread sees that and sends the settings once more.
  const std::string listen = address_.address;
  server_.reset();
  ASSERT_TRUE(Eventually([&] { return !remote_->responsive(); }));
  oss::ServerOptions options;
  options.listen = listen;
  options.key = key_;
  options.dirs = {dir_};
  auto server = oss::StartServer(options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  server_ = std::move(server).value();
  EXPECT_TRUE(Eventually([&] { return PrimaryOnOss(*remote_, nrs::Head::kRegular) == "tbf"; }));
}

TEST_F(RemoteOstTest, TheOssSchedulerTakesPartInTheMountsEpochs) {
  auto hub = std::make_shared<nrs::SharedEpochHub>(nrs::CombineEpochData, std::chrono::seconds(1));
  Connect(hub);
  // The OST's scheduler on the OSS asks the mount's hub over its stream:
  // it is a member and its epochs advance.
  ASSERT_TRUE(Eventually([&] { return hub->StandingOf(3) == nrs::Standing::kMember; }));
  ASSERT_TRUE(Eventually([&] { return remote_->epoch() > 2; }));
  const nrs::Epoch before = remote_->epoch();
  EXPECT_TRUE(Eventually([&] { return remote_->epoch() > before + 2; }));
  EXPECT_EQ(remote_->EpochStanding(), hub->StandingOf(3));
  // A second participant in the mount (a local OST) and the remote one
  // meet in one handler: both advance through the same epochs.
  std::atomic<nrs::Epoch> local{nrs::kFirstEpoch};
  std::function<void()> ask;
  ask = [&] {
    hub->NextEpoch(0, local.load(), {}, [&](nrs::Epoch next, std::shared_ptr<const nrs::EpochData>) {
      if (nrs::EpochError(next)) return;
      local.store(next);
    });
  };
  for (int i = 0; i < 5; ++i) {
    const nrs::Epoch mine = local.load();
    ask();
    ASSERT_TRUE(Eventually([&] { return local.load() > mine; }));
  }
  EXPECT_NEAR(static_cast<double>(local.load()), static_cast<double>(remote_->epoch()), 1.0);
  hub->LastEpoch(0, local.load());
  // The OSS stops: the stream ends and the mount's hub lets it go at once.
  server_.reset();
  EXPECT_TRUE(Eventually([&] { return hub->StandingOf(3) != nrs::Standing::kMember &&
                                      hub->StandingOf(3) != nrs::Standing::kAsked; }));
}

TEST(OssPathTest, ParsesAddressesAndRefusesTheRest) {
  auto oss = client::ParseOssPath("oss://127.0.0.5:7000/srv/ost0");
  ASSERT_TRUE(oss.ok());
  EXPECT_EQ(oss->address, "127.0.0.5:7000");
  EXPECT_EQ(oss->dir, "/srv/ost0");
  for (const char* bad : {"oss://127.0.0.5/srv", "oss://127.0.0.5:x/srv", "oss://:7000",
                          "oss://h:1/", "oss://h:1/a/../b", "/srv/ost0", "oss://h:1/a/"}) {
    EXPECT_EQ(client::ParseOssPath(bad).err(), EINVAL) << bad;
  }
}

}  // namespace
}  // namespace sfs
