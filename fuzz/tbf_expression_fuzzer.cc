// TBF rule expressions (nrs/tbf_expression.h) and TBF types ("uid+jobid",
// nrs/tbf_rules.h). The canonical text of a parsed expression must parse
// back to one with the same text, fields and verdicts on sample requests;
// a type's canonical name must parse back to the same fields.
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "nrs/tbf_expression.h"
#include "nrs/tbf_rules.h"

namespace sfs::fuzz {
namespace {

std::vector<nrs::RequestInfo> SampleRequests(std::string_view input) {
  std::vector<nrs::RequestInfo> out;
  const char* jobids[] = {"", "ior.1", "dd.0", "a", "*"};
  for (uint32_t id : {0u, 1u, 499u, 500u, 1000u, 1999u, 2000u, 4294967295u}) {
    for (int op = 0; op <= static_cast<int>(nrs::kLastOp); ++op) {
      nrs::RequestInfo info;
      info.uid = id;
      info.gid = id == 0 ? 1000 : id;
      info.op = static_cast<nrs::Op>(op);
      info.jobid = std::make_shared<const std::string>(jobids[(id + op) % std::size(jobids)]);
      out.push_back(info);
    }
  }
  // A job id taken from the input itself, so globs can match it.
  nrs::RequestInfo own;
  own.jobid = std::make_shared<const std::string>(input.substr(0, 32));
  out.push_back(own);
  return out;
}

void CheckExpression(std::string_view text) {
  auto parsed = nrs::TbfExpression::Parse(text);
  if (!parsed.ok()) {
    Check(!parsed.status().message().empty(), "a refusal without a message", text);
    return;
  }
  const std::string canonical = (*parsed)->ToString();
  auto again = nrs::TbfExpression::Parse(canonical);
  if (!again.ok()) Fail("Parse refused ToString's text", canonical, again.status().message());
  Check((*again)->ToString() == canonical, "ToString is not stable", canonical,
        (*again)->ToString());
  Check((*again)->fields() == (*parsed)->fields(), "fields changed", canonical);
  for (const nrs::RequestInfo& info : SampleRequests(text)) {
    Check((*again)->Matches(info) == (*parsed)->Matches(info), "a verdict changed", text,
          canonical);
  }
}

void CheckType(std::string_view text) {
  auto fields = nrs::ParseTbfType(text);
  if (!fields.ok()) return;
  Check(*fields != 0 && (*fields & ~nrs::kTbfAllFields) == 0, "fields out of range", text);
  const std::string name = nrs::TbfTypeName(*fields);
  auto again = nrs::ParseTbfType(name);
  if (!again.ok()) Fail("ParseTbfType refused TbfTypeName's text", name, again.status().message());
  // "" means every field, and every field is named in full.
  Check(*again == *fields, "a TBF type changed through its name", text, name);
}

}  // namespace
}  // namespace sfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = sfs::fuzz::Text(data, size);
  sfs::fuzz::CheckExpression(text);
  sfs::fuzz::CheckType(text);
  return 0;
}
