// Root squash (NFS's root_squash, Lustre's nodemap with admin off): root
// on a client machine is not root on the filesystem unless the MDS trusts
// that machine. A squashed root caller becomes nobody (uid and gid 65534,
// no other groups): what it creates is nobody's, settings are refused to
// it, and the MDS checks its permissions itself, since the client's kernel
// (default_permissions) lets root through everything.
//
// Non-root callers are checked by their client's kernel, as over NFS with
// AUTH_SYS: the MDS trusts a client holding the key to say who calls.
//
// Pure functions; the caller reads the inodes they look at.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "meta/meta_store.h"

namespace sfs::mds {

inline constexpr uint32_t kSquashedId = 65534;  // nobody, nogroup

// An address range of trusted client machines: "127.0.0.1", "10.0.0.0/8",
// "::1", "fd00::/8".
struct AddressRange {
  std::vector<uint8_t> bytes;  // 4 (IPv4) or 16 (IPv6)
  int prefix_bits = 0;
};
// EINVAL for anything else.
Result<AddressRange> ParseAddressRange(std::string_view text);
// Whether gRPC's peer string ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000",
// "ipv6:%5B::1%5D:5000") is in one of `ranges`. Unix sockets and unknown
// forms are not.
bool PeerIn(std::string_view peer, const std::vector<AddressRange>& ranges);

// May nobody use `inode` as `mask` (R_OK, W_OK, X_OK, or-ed) asks? EACCES
// naming `what` if not.
Status MayAccess(const meta::Inode& inode, int mask, std::string_view what);
// May nobody remove (or rename away, or replace) `child` from `dir`? Write
// and search on the directory, and under a sticky directory, owning the
// directory or the child.
Status MayRemove(const meta::Inode& dir, const meta::Inode& child);
// May nobody make `change` to `inode`? Mode and explicit owner changes
// need ownership (a chown to another user never); times need ownership or
// write permission (the two kinds of utimes cannot be told apart here);
// a size change needs write permission; a project change is root's.
Status MaySetAttr(const meta::Inode& inode, const meta::AttrChange& change);
// May nobody read (`write` false) or set and remove (`write`) the
// extended attribute `name` of `inode`? user.* need read or write
// permission (a sticky directory's need ownership to change); the others
// are root's.
Status MayUseXattr(const meta::Inode& inode, std::string_view name, bool write);

}  // namespace sfs::mds
