// Internal to meta/: the RocksDB merge operator of the quota usage records
// (Q keys; the operands are in meta/keys.h). Every open of a store's
// database must install it (tests that open one raw too): RocksDB cannot
// flush, compact or read a key with operands without it.
#pragma once

#include <memory>

#include <rocksdb/merge_operator.h>

namespace sfs::meta {

// Stateless and thread-safe, as RocksDB requires. Its name is part of the
// format: a database written with operands names its operator.
std::shared_ptr<rocksdb::MergeOperator> NewUsageMergeOperator();

}  // namespace sfs::meta
