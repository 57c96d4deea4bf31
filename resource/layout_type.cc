#include "resource/credit.h"

namespace sfs::resource {
namespace {

class LayoutType final : public CreditType {
 public:
  const char* Name() const override { return "layout"; }

  bool Matches(const Credit& wanted, const Credit& have) const override {
    return wanted.id == have.id && (have.mode == Mode::kWrite || wanted.mode == Mode::kRead);
  }

  bool Conflicts(const Credit& a, const Credit& b) const override {
    return a.id == b.id && (a.mode == Mode::kWrite || b.mode == Mode::kWrite);
  }

  Credit Expand(const Credit& wanted, bool) const override { return wanted; }
};

}  // namespace

std::unique_ptr<CreditType> NewLayoutType() { return std::make_unique<LayoutType>(); }

}  // namespace sfs::resource
