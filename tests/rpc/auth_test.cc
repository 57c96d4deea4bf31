// The key proof of every call (rpc/auth.h): key files, sessions, MACs and
// the replay window.
#include "rpc/auth.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sfs::rpc {
namespace {

class KeyDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/sfs-key-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
};

TEST_F(KeyDir, AKeyFileOthersMayReadIsRefusedWithTheFix) {
  const std::string path = Write("key", "0123456789abcdef0123", 0644);
  auto key = ReadKeyFile(path);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.err(), EACCES);
  EXPECT_NE(key.status().message().find("chmod 600"), std::string::npos);
  chmod(path.c_str(), 0600);
  key = ReadKeyFile(path);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->bytes, "0123456789abcdef0123");
}

TEST_F(KeyDir, AShortOrMissingKeyIsRefused) {
  EXPECT_EQ(ReadKeyFile(Write("short", "abc\n", 0600)).err(), EINVAL);
  EXPECT_EQ(ReadKeyFile(dir_ + "/none").err(), ENOENT);
}

TEST_F(KeyDir, NewKeyFilesArePrivateRandomAndNeverOverwritten) {
  const std::string a = dir_ + "/a", b = dir_ + "/b";
  ASSERT_TRUE(WriteNewKeyFile(a).ok());
  ASSERT_TRUE(WriteNewKeyFile(b).ok());
  struct stat st {};
  ASSERT_EQ(stat(a.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto ka = ReadKeyFile(a), kb = ReadKeyFile(b);
  ASSERT_TRUE(ka.ok() && kb.ok());
  EXPECT_EQ(ka->bytes.size(), 64u);
  EXPECT_NE(ka->bytes, kb->bytes);
  EXPECT_EQ(WriteNewKeyFile(a).err(), EEXIST);
  EXPECT_EQ(ReadKeyFile(a)->bytes, ka->bytes);
}

TEST(ReplayWindowTest, EachSequenceOnceInAnyOrderWithinTheWindow) {
  ReplayWindow window;
  EXPECT_FALSE(window.Accept(0));
  EXPECT_TRUE(window.Accept(5));
  EXPECT_TRUE(window.Accept(3));
  EXPECT_TRUE(window.Accept(4));
  EXPECT_FALSE(window.Accept(3));
  EXPECT_FALSE(window.Accept(5));
  EXPECT_TRUE(window.Accept(1));
  const uint64_t far = 5 + ReplayWindow::kReplayWindow;
  EXPECT_TRUE(window.Accept(far));
  EXPECT_FALSE(window.Accept(5));   // too old now
  EXPECT_TRUE(window.Accept(far - 1));
  EXPECT_FALSE(window.Accept(far - 1));
  // A jump far beyond the window forgets everything before it.
  EXPECT_TRUE(window.Accept(far + 3 * ReplayWindow::kReplayWindow));
  EXPECT_FALSE(window.Accept(far));
}

TEST(SessionTableTest, OnlyACallerWithTheKeyIsAcceptedAndOnlyOnce) {
  SessionTable table(Key{"the filesystem's own key"});
  ClientSession good(Key{"the filesystem's own key"});
  ClientSession bad(Key{"somebody else's key..."});
  for (ClientSession* client : {&good, &bad}) {
    auto opened = table.Open(client->client_nonce());
    ASSERT_TRUE(opened.ok());
    ASSERT_TRUE(client->Open(opened->session, opened->server_nonce).ok());
  }
  auto sig = good.Sign("Io", "fields");
  EXPECT_TRUE(table.Check(sig.session, sig.sequence, "Io", "fields", sig.mac).ok());
  // Played again: refused.
  EXPECT_EQ(table.Check(sig.session, sig.sequence, "Io", "fields", sig.mac).err(), EACCES);
  // Other fields, another method, another session: the MAC does not hold.
  auto next = good.Sign("Io", "fields");
  EXPECT_EQ(table.Check(next.session, next.sequence, "Io", "other fields", next.mac).err(), EACCES);
  EXPECT_EQ(table.Check(next.session, next.sequence, "Label", "fields", next.mac).err(), EACCES);
  // ... and a forged call did not use up the real one's sequence number.
  EXPECT_TRUE(table.Check(next.session, next.sequence, "Io", "fields", next.mac).ok());
  auto forged = bad.Sign("Io", "fields");
  EXPECT_EQ(table.Check(forged.session, forged.sequence, "Io", "fields", forged.mac).err(), EACCES);
  EXPECT_EQ(table.Check(999, 1, "Io", "fields", sig.mac).err(), EACCES);
  EXPECT_EQ(table.Open("short").err(), EINVAL);
}

TEST(SessionTableTest, ASessionIsBoundToTheServersNonce) {
  // The same client nonce in two sessions gives two keys: a call recorded
  // in one is no good in the other.
  SessionTable table(Key{"the filesystem's own key"});
  ClientSession client(Key{"the filesystem's own key"});
  auto first = table.Open(client.client_nonce());
  auto second = table.Open(client.client_nonce());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->server_nonce, second->server_nonce);
  ASSERT_TRUE(client.Open(first->session, first->server_nonce).ok());
  auto sig = client.Sign("Io", "f");
  EXPECT_EQ(table.Check(second->session, sig.sequence, "Io", "f", sig.mac).err(), EACCES);
  EXPECT_TRUE(table.Check(first->session, sig.sequence, "Io", "f", sig.mac).ok());
}

TEST(SessionTableTest, TheLeastRecentlyUsedSessionMakesRoom) {
  SessionTable table(Key{"the filesystem's own key"}, /*capacity=*/2);
  ClientSession a(Key{"the filesystem's own key"}), b(Key{"the filesystem's own key"}),
      c(Key{"the filesystem's own key"});
  for (ClientSession* client : {&a, &b}) {
    auto opened = table.Open(client->client_nonce());
    ASSERT_TRUE(client->Open(opened->session, opened->server_nonce).ok());
  }
  auto used = a.Sign("Io", "f");  // a is used, so b is the oldest
  ASSERT_TRUE(table.Check(used.session, used.sequence, "Io", "f", used.mac).ok());
  auto opened = table.Open(c.client_nonce());
  ASSERT_TRUE(c.Open(opened->session, opened->server_nonce).ok());
  auto sa = a.Sign("Io", "f"), sb = b.Sign("Io", "f");
  EXPECT_TRUE(table.Check(sa.session, sa.sequence, "Io", "f", sa.mac).ok());
  EXPECT_EQ(table.Check(sb.session, sb.sequence, "Io", "f", sb.mac).err(), EACCES);
}

TEST(SessionTableTest, AFloodOfHellosDoesNotPushOutSessionsInUse) {
  // Hello needs no key: whoever floods it must not end the sessions of
  // those who have the key.
  SessionTable table(Key{"the filesystem's own key"}, /*capacity=*/4);
  ClientSession client(Key{"the filesystem's own key"});
  auto opened = table.Open(client.client_nonce());
  ASSERT_TRUE(client.Open(opened->session, opened->server_nonce).ok());
  auto first = client.Sign("Io", "f");
  ASSERT_TRUE(table.Check(first.session, first.sequence, "Io", "f", first.mac).ok());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(table.Open(RandomBytes(kNonceBytes)).ok());
  }
  auto later = client.Sign("Io", "f");
  EXPECT_TRUE(table.Check(later.session, later.sequence, "Io", "f", later.mac).ok());
}

}  // namespace
}  // namespace sfs::rpc
