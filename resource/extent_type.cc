#include <string>

#include "resource/credit.h"

namespace sfs::resource {
namespace {

bool Overlap(const Credit& a, const Credit& b) { return a.start < b.end && b.start < a.end; }

class ExtentType final : public CreditType {
 public:
  const char* Name() const override { return "extent"; }

  bool Matches(const Credit& wanted, const Credit& have) const override {
    return wanted.id == have.id && have.start <= wanted.start && wanted.end <= have.end &&
           (have.mode == Mode::kWrite || wanted.mode == Mode::kRead);
  }

  bool Conflicts(const Credit& a, const Credit& b) const override {
    return a.id == b.id && (a.mode == Mode::kWrite || b.mode == Mode::kWrite) && Overlap(a, b);
  }

  Credit Expand(const Credit& wanted, bool alone) const override {
    // Alone on the file: the whole file, writable, so none of the owner's
    // later requests needs the root (lockless mode). Reading beside
    // others: the whole file for reading, as Lustre expands read locks,
    // so readers keep one credit each until a writer revokes it. A write
    // beside others gets what it asked for. (The manager grants only what
    // clashes with nobody.)
    if (!alone && wanted.mode == Mode::kWrite) return wanted;
    Credit whole = wanted;
    whole.start = 0;
    whole.end = kWholeRange;
    whole.mode = alone ? Mode::kWrite : Mode::kRead;
    return whole;
  }
};

}  // namespace

std::unique_ptr<CreditType> NewExtentType() { return std::make_unique<ExtentType>(); }

std::string ToString(const Credit& credit) {
  static const char* const kKinds[] = {"?", "?", "extent", "quota", "space", "identifier"};
  const auto kind = static_cast<size_t>(credit.kind);
  std::string text = kind < 6 ? kKinds[kind] : "?";
  text += " " + std::to_string(credit.id) + " [" + std::to_string(credit.start) + ", ";
  text += credit.end == kWholeRange ? std::string("eof") : std::to_string(credit.end);
  text += credit.mode == Mode::kWrite ? ") write" : ") read";
  return text;
}

}  // namespace sfs::resource
