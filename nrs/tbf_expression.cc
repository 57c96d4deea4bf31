#include "nrs/tbf_expression.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "nrs/tbf_text.h"

namespace sfs::nrs {
namespace {

constexpr size_t kMaxJobidLength = 255;

// Opcode classes, in the order of their bits in TbfExpression::Condition:
// the data ops (truncate and punch make one class, "punch", as in
// Lustre's ost_punch), then the metadata ops under their nrs::OpName.
constexpr const char* kOpcodeNames[] = {
    "read",   "write",   "punch",   "fsync", "fallocate", "destroy", "seek",
    "lookup", "getattr", "setattr", "create", "mknod",    "open",    "readdir",
    "mkdir",  "rmdir",   "unlink",  "rename", "link",     "symlink", "readlink"};
constexpr size_t kOpcodeCount = std::size(kOpcodeNames);
static_assert(kOpcodeCount <= 32, "TbfExpression::Condition::opcodes has 32 bits");

size_t OpcodeIndex(Op op) {
  switch (op) {
    case Op::kRead:
      return 0;
    case Op::kWrite:
      return 1;
    case Op::kTruncate:
    case Op::kPunch:
      return 2;
    case Op::kSync:
      return 3;
    case Op::kAllocate:
      return 4;
    case Op::kDestroy:
      return 5;
    case Op::kSeek:
      return 6;
    default:
      // The metadata ops follow in enum order from kLookup.
      return 7 + (static_cast<size_t>(op) - static_cast<size_t>(Op::kLookup));
  }
}

std::string OpcodeList() {
  std::string out;
  for (size_t k = 0; k < kOpcodeCount; k++) out += std::string(k > 0 ? ", " : "") + kOpcodeNames[k];
  return out;
}

// '*' matches any run of characters, '?' any one character.

}  // namespace

bool TbfExpression::Condition::Matches(const RequestInfo& info) const {
  switch (field) {
    case kTbfUid:
      return ids.Contains(info.uid);
    case kTbfGid:
      return ids.Contains(info.gid);
    case kTbfJobid: {
      const std::string_view jobid = info.jobid ? std::string_view(*info.jobid) : "";
      return std::any_of(jobids.begin(), jobids.end(),
                         [&](const std::string& p) { return GlobMatch(p, jobid); });
    }
    case kTbfOpcode:
      return (opcodes >> OpcodeIndex(info.op)) & 1;
  }
  return false;
}

bool TbfExpression::Matches(const RequestInfo& info) const {
  return std::any_of(any_of_.begin(), any_of_.end(), [&](const std::vector<Condition>& all) {
    return std::all_of(all.begin(), all.end(), [&](const Condition& c) { return c.Matches(info); });
  });
}

TbfFields TbfExpression::fields() const {
  TbfFields fields = 0;
  for (const auto& all : any_of_) {
    for (const Condition& c : all) fields |= c.field;
  }
  return fields;
}

Result<TbfExpression::Condition> TbfExpression::ParseCondition(std::string_view text) {
  text = Trim(text);
  const std::string quoted = "'" + std::string(text) + "'";
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) return Invalid("condition " + quoted + " is not field={...}");
  const std::string_view field = Trim(text.substr(0, eq));
  const std::string_view braced = Trim(text.substr(eq + 1));
  if (braced.size() < 2 || braced.front() != '{' || braced.back() != '}') {
    return Invalid("condition " + quoted + " is not field={...}");
  }
  const std::string_view inner = braced.substr(1, braced.size() - 2);
  if (inner.find_first_of("{}=&") != std::string_view::npos) {
    return Invalid("condition " + quoted + " has a stray brace or '=' inside its value list");
  }
  const std::vector<std::string_view> values = SplitAny(inner, std::string(kBlanks) + ",");
  if (values.empty()) return Invalid("condition " + quoted + " has an empty value list");

  Condition c;
  if (field == "uid" || field == "gid") {
    c.field = field == "uid" ? kTbfUid : kTbfGid;
    for (std::string_view v : values) {
      SFS_RETURN_IF_ERROR(c.ids.Add(field, v));
    }
  } else if (field == "jobid") {
    c.field = kTbfJobid;
    for (std::string_view v : values) {
      if (v.size() > kMaxJobidLength) {
        return Invalid("job id '" + std::string(v) + "' is longer than " +
                       std::to_string(kMaxJobidLength) + " characters");
      }
      c.jobids.emplace_back(v);
    }
  } else if (field == "opcode") {
    c.field = kTbfOpcode;
    for (std::string_view v : values) {
      const auto* it = std::find(std::begin(kOpcodeNames), std::end(kOpcodeNames), v);
      if (it == std::end(kOpcodeNames)) {
        return Invalid("unknown opcode '" + std::string(v) + "' (" + OpcodeList() + ")");
      }
      c.opcodes |= uint32_t{1} << (it - std::begin(kOpcodeNames));
    }
  } else if (field == "nid") {
    return Invalid("condition " + quoted + ": stripefs has no network ids (nid)");
  } else {
    return Invalid("condition " + quoted + " tests unknown field '" + std::string(field) +
                   "' (uid, gid, jobid, opcode)");
  }
  return c;
}

Result<std::shared_ptr<const TbfExpression>> TbfExpression::Parse(std::string_view text) {
  if (const size_t at = FindControl(text); at != std::string_view::npos) {
    return Invalid("expression has a control character at byte " + std::to_string(at));
  }
  int depth = 0;
  for (char ch : text) {
    if (ch == '{') depth++;
    if (ch == '}') depth--;
    if (depth < 0 || depth > 1) {
      return Invalid("expression '" + std::string(text) + "' has bad braces");
    }
  }
  if (depth != 0) return Invalid("expression '" + std::string(text) + "' has bad braces");

  auto expression = std::make_shared<TbfExpression>();
  for (std::string_view conjunction : SplitOutsideBraces(text, ',')) {
    std::vector<Condition> all;
    for (std::string_view condition : SplitOutsideBraces(conjunction, '&')) {
      auto c = ParseCondition(condition);
      if (!c.ok()) return c.status();
      all.push_back(std::move(*c));
    }
    expression->any_of_.push_back(std::move(all));
  }
  return std::shared_ptr<const TbfExpression>(std::move(expression));
}

std::string TbfExpression::ToString() const {
  std::string out;
  for (size_t i = 0; i < any_of_.size(); i++) {
    if (i > 0) out += ',';
    for (size_t j = 0; j < any_of_[i].size(); j++) {
      const Condition& c = any_of_[i][j];
      if (j > 0) out += '&';
      out += TbfTypeName(c.field) + "={";
      std::vector<std::string> values;
      if (!c.ids.empty()) values.push_back(c.ids.ToString());
      for (const std::string& jobid : c.jobids) values.push_back(jobid);
      for (size_t k = 0; k < kOpcodeCount; k++) {
        if ((c.opcodes >> k) & 1) values.push_back(kOpcodeNames[k]);
      }
      for (size_t k = 0; k < values.size(); k++) out += (k > 0 ? " " : "") + values[k];
      out += '}';
    }
  }
  return out;
}

const char* TbfOpcodeName(Op op) { return kOpcodeNames[OpcodeIndex(op)]; }

Op TbfOpcodeClass(Op op) { return op == Op::kTruncate ? Op::kPunch : op; }

}  // namespace sfs::nrs
