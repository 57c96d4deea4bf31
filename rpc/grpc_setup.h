// How stripefs sets up gRPC on both sides: channel and server arguments
// shared by every client (remote OSTs, the MDS client) and server (OSS,
// MDS), so all of them find a dead peer and a restarted one alike.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace sfs::rpc {

// A client channel to `address`: messages up to `max_message_bytes`; a
// peer back after a restart found within a second; a ping every 10 s
// (answered within 5 s), also between calls, so calls to a peer whose
// machine died fail instead of waiting for TCP.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                          std::shared_ptr<grpc::ChannelCredentials> credentials,
                                          int max_message_bytes);

// The same for a server: its clients' pings allowed, its own pings to
// them (a client whose machine died, its streams open, is found within
// 15 s), and threads kept waiting for calls. gRPC's synchronous server
// (1.51) starts a thread whenever a call leaves fewer than MIN_POLLERS
// waiting and ends one that finishes a call while more than MAX_POLLERS
// wait: with its defaults (1 and 2) nearly every call of a busy client
// started and ended a thread (strace: a clone3 per 1.5 calls).
void ConfigureServer(grpc::ServerBuilder& builder, int max_message_bytes);

}  // namespace sfs::rpc
