#include "meta/usage_merge.h"

#include <string>
#include <string_view>

#include "meta/keys.h"
#include "meta/usage_book.h"

namespace sfs::meta {
namespace {

std::string_view View(const rocksdb::Slice& slice) { return {slice.data(), slice.size()}; }

// Only full merges: a partial merge of two operands cannot be one operand
// (whether a grace end starts depends on the record they land on), so
// RocksDB keeps operands until it meets the record or the last level.
// Never fails: a failed merge would stop RocksDB's compactions and with
// them its writes. What does not decode yields an empty value, which
// DecodeUsage refuses, so the next open counts usage from the inodes.
class UsageMergeOperator final : public rocksdb::MergeOperator {
 public:
  const char* Name() const override { return "stripefs.UsageMerge.v1"; }

  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    QuotaUsage usage;
    if (in.existing_value != nullptr) {
      auto stored = DecodeUsage(View(*in.existing_value));
      if (!stored.ok()) return Damaged(out);
      usage = *stored;
    }
    for (const rocksdb::Slice& operand : in.operand_list) {
      auto delta = DecodeUsageDelta(View(operand));
      if (!delta.ok()) return Damaged(out);
      usage = WithDelta(usage, *delta);
    }
    out->new_value = EncodeUsage(usage);
    return true;
  }

 private:
  static bool Damaged(MergeOperationOutput* out) {
    out->new_value.clear();
    return true;
  }
};

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewUsageMergeOperator() {
  return std::make_shared<UsageMergeOperator>();
}

}  // namespace sfs::meta
