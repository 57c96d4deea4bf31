// Job id settings (fs/jobid.h): jobid_var and jobid_name validation, and
// the job id a valid template expands to. A template that passes
// ValidJobidName must give a job id of at most kMaxJobidLength bytes
// without blanks or control bytes (job ids become class labels and log
// text); a valid jobid_var is an environment variable name. The fake /proc
// does not exist, so the variable is never found and %e is "unknown".
#include <fuzzer/FuzzedDataProvider.h>

#include <string>

#include "fs/jobid.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  FuzzedDataProvider input(data, size);
  const std::string var = input.ConsumeRandomLengthString(80);
  const std::string name = input.ConsumeRemainingBytesAsString();

  if (fs::ValidJobidVar(var)) {
    fuzz::Check(!var.empty() && var.size() <= 64 && !(var[0] >= '0' && var[0] <= '9'),
                "jobid_var accepted a name that is not a variable name", var);
    for (char c : var) {
      const bool ok =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      fuzz::Check(ok, "jobid_var accepted a byte outside [A-Za-z0-9_]", var);
    }
  }
  if (!fs::ValidJobidName(name)) return 0;
  fs::JobIds jobids("/nonexistent-proc-for-fuzzing");
  for (const char* v : {"SLURM_JOB_ID", "nodelocal"}) {
    const auto jobid = jobids.Resolve(1234, 1000, 100, fs::JobidConfig{v, name});
    fuzz::Check(jobid->size() <= fs::JobIds::kMaxJobidLength, "a job id longer than the limit",
                name, *jobid);
    for (char c : *jobid) {
      fuzz::Check(static_cast<unsigned char>(c) > 0x20 && c != 0x7f,
                  "a job id with a blank or control byte", name, *jobid);
    }
  }
  return 0;
}
