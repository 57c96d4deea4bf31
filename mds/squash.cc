#include "mds/squash.h"

#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

namespace sfs::mds {
namespace {

bool ParseAddress(const std::string& text, std::vector<uint8_t>* bytes) {
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v4);
    bytes->assign(p, p + 4);
    return true;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v6);
    bytes->assign(p, p + 16);
    return true;
  }
  return false;
}

bool InRange(const std::vector<uint8_t>& address, const AddressRange& range) {
  if (address.size() != range.bytes.size()) return false;
  int bits = range.prefix_bits;
  for (size_t i = 0; i < address.size() && bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((address[i] & mask) != (range.bytes[i] & mask)) return false;
  }
  return true;
}

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

bool Owns(const meta::Inode& inode) { return inode.uid == kSquashedId; }

}  // namespace

Result<AddressRange> ParseAddressRange(std::string_view text) {
  const size_t slash = text.find('/');
  const std::string address(text.substr(0, slash));
  AddressRange range;
  if (!ParseAddress(address, &range.bytes)) {
    return Status::Error(EINVAL, "'" + std::string(text) + "' is not an IP address or ADDRESS/BITS");
  }
  const int max_bits = static_cast<int>(range.bytes.size() * 8);
  range.prefix_bits = max_bits;
  if (slash != std::string_view::npos) {
    const std::string_view bits = text.substr(slash + 1);
    int value = -1;
    auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), value);
    if (ec != std::errc() || end != bits.data() + bits.size() || value < 0 || value > max_bits) {
      return Status::Error(EINVAL, "'" + std::string(text) + "': the prefix is 0 to " +
                                       std::to_string(max_bits) + " bits");
    }
    range.prefix_bits = value;
  }
  return range;
}

bool PeerIn(std::string_view peer, const std::vector<AddressRange>& ranges) {
  std::string address;
  if (peer.rfind("ipv4:", 0) == 0) {
    address = std::string(peer.substr(5));
    address = address.substr(0, address.rfind(':'));
  } else if (peer.rfind("ipv6:", 0) == 0) {
    address = Replace(Replace(std::string(peer.substr(5)), "%5B", "["), "%5D", "]");
    const size_t close = address.rfind(']');
    if (address.empty() || address[0] != '[' || close == std::string::npos) return false;
    address = address.substr(1, close - 1);
  } else {
    return false;
  }
  std::vector<uint8_t> bytes;
  if (!ParseAddress(address, &bytes)) return false;
  for (const AddressRange& range : ranges) {
    if (InRange(bytes, range)) return true;
  }
  return false;
}

Status MayAccess(const meta::Inode& inode, int mask, std::string_view what) {
  // The owner's bits if nobody owns it, else the group's if nogroup is its
  // group, else the others' (as the kernel's generic_permission).
  const int shift = Owns(inode) ? 6 : inode.gid == kSquashedId ? 3 : 0;
  const int granted = static_cast<int>((inode.mode >> shift) & 7);
  if ((granted & mask) == mask) return Status::Ok();
  return Status::Error(EACCES, "root of this client is squashed to nobody, which may not " +
                                   std::string(what) + " (inode " + std::to_string(inode.ino) +
                                   ")");
}

Status MayRemove(const meta::Inode& dir, const meta::Inode& child) {
  SFS_RETURN_IF_ERROR(MayAccess(dir, W_OK | X_OK, "change this directory"));
  if ((dir.mode & S_ISVTX) && !Owns(dir) && !Owns(child)) {
    return Status::Error(EPERM, "root of this client is squashed to nobody, which may not remove "
                                "another user's entry from a sticky directory (inode " +
                                    std::to_string(dir.ino) + ")");
  }
  return Status::Ok();
}

Status MaySetAttr(const meta::Inode& inode, const meta::AttrChange& change) {
  auto refused = [&](const char* what) {
    return Status::Error(EPERM, std::string("root of this client is squashed to nobody, which may "
                                            "not ") + what + " (inode " +
                                    std::to_string(inode.ino) + ")");
  };
  if (change.uid && *change.uid != inode.uid) return refused("change an owner");
  if (change.gid && *change.gid != inode.gid && (!Owns(inode) || *change.gid != kSquashedId)) {
    return refused("give a file to a group it is not in");
  }
  if (change.projid && *change.projid != inode.projid) return refused("change a project id");
  if ((change.mode || change.gid) && !Owns(inode)) return refused("change another user's mode");
  if ((change.atime || change.mtime) && !Owns(inode)) {
    SFS_RETURN_IF_ERROR(MayAccess(inode, W_OK, "set times of a file it may not write"));
  }
  if (change.size) SFS_RETURN_IF_ERROR(MayAccess(inode, W_OK, "truncate this file"));
  return Status::Ok();
}

Status MayUseXattr(const meta::Inode& inode, std::string_view name, bool write) {
  if (name.rfind("user.", 0) != 0) {
    return Status::Error(EPERM, "root of this client is squashed to nobody: attribute " +
                                    std::string(name) + " is root's");
  }
  if (!write) return MayAccess(inode, R_OK, "read this file's attributes");
  if (S_ISDIR(inode.mode) && (inode.mode & S_ISVTX) && !Owns(inode)) {
    return Status::Error(EPERM, "root of this client is squashed to nobody, which may not change "
                                "attributes of another user's sticky directory");
  }
  return MayAccess(inode, W_OK, "change this file's attributes");
}

}  // namespace sfs::mds
