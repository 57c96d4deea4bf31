// stripefs: the command-line front end. A thin wrapper over fs/stripefs.h.
//   stripefs mkfs --meta DIR --ost DIR [--ost DIR ...] [--stripe-count N] [--stripe-size S] [--force]
//   stripefs mount META MOUNTPOINT [-f] [-o opt[,opt...]]
//   stripefs umount MOUNTPOINT
//   stripefs set_param MOUNTPOINT name=value ... | get_param MOUNTPOINT name ...
//   stripefs setstripe ... PATH | getstripe PATH... | pool list|set|remove MOUNTPOINT ...
//   stripefs ost add MOUNTPOINT PATH
//   stripefs ost deactivate|activate MOUNTPOINT N
//   stripefs df [-h | -i] [--json] MOUNTPOINT
//   stripefs jobstats MOUNTPOINT [--top N] [--sort bytes|ops] [--json]
//   stripefs fsck META_DIR [--repair] [--key FILE]
//   stripefs oss --listen ADDRESS:PORT --key FILE [-f] DIR [DIR ...]
//   stripefs key new FILE
#include <malloc.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fs/stripefs.h"
#include "fs/version.h"
#include "layout/layout.h"
#include "tools/stripefs/cli_util.h"
#include "tools/stripefs/df.h"
#include "tools/stripefs/jobstats_cmd.h"
#include "tools/stripefs/layout_cmds.h"
#include "tools/stripefs/mds_cmd.h"
#include "tools/stripefs/oss_cmd.h"
#include "tools/stripefs/params.h"
#include "tools/stripefs/quota_cmds.h"

namespace {

using sfs::cli::Fail;

// The one text behind --help and the stripefs(8) man page
// (tools/stripefs/help_to_man.sh turns it into roff at build time): the
// first line names the tool, "  stripefs ..." lines are commands, and the
// deeper-indented lines under one say what it does.
constexpr const char* kHelp =
    "stripefs - a striped filesystem in FUSE with Lustre's request scheduling and placement\n"
    "\n"
    "usage:\n"
    "  stripefs mkfs --meta DIR --ost DIR [--ost DIR ...] [--stripe-count N]\n"
    "                [--stripe-size SIZE] [--key FILE] [--tls-ca FILE\n"
    "                [--tls-cert FILE --tls-key FILE]] [--force]\n"
    "      Formats a filesystem: its metadata directory and OST directories.\n"
    "      An OST may be oss://ADDRESS:PORT/DIR, a directory a stripefs oss\n"
    "      serves, labelled through it; that needs the shared key (--key) and,\n"
    "      where the OSSs use TLS, the CA of their certificates (--tls-ca).\n"
    "  stripefs mount META_DIR|mds://ADDRESS:PORT MOUNTPOINT [-f] [-o option,...]\n"
    "      Mounts it (in the background unless -f); mds://: a client of a stripefs\n"
    "      mds (needs key=FILE). Options: log_level=LEVEL\n"
    "      log_file=PATH key=FILE tls_ca=FILE tls_cert=FILE tls_key=FILE\n"
    "      admin_uid=UID ost_threads=N attr_timeout=SECONDS\n"
    "      ost_timeout=SECONDS max_read=BYTES cache=writearound|writethrough|writeback\n"
    "      metrics=ADDRESS:PORT mdt_nrs=on|off extent_credits=on|off max_request=SIZE\n"
    "      io_uring=auto|on|off uring_depth=N uring_nice=N, and any FUSE mount\n"
    "      option. Also as mount -t fuse.stripefs META_DIR MOUNTPOINT -o ... and\n"
    "      in /etc/fstab.\n"
    "  stripefs umount MOUNTPOINT\n"
    "      Unmounts it (as umount or fusermount3 -u do).\n"
    "  stripefs set_param MOUNTPOINT name=value [name=value ...]\n"
    "  stripefs get_param MOUNTPOINT name [name ...]\n"
    "      Changes or shows run-time settings. Names: jobid_var jobid_name\n"
    "      nrs_policies ost<N>.nrs_policies nrs_tbf_rule nrs_stats nrs_crrn_quantum\n"
    "      nrs_crrn_weight\n"
    "      nrs_orr_quantum nrs_orr_quantum_bytes nrs_orr_supported\n"
    "      nrs_tbf_default_rate nrs_tbf_class_limit\n"
    "      nrs_tbf_scope nrs_epoch_ms nrs_epoch_max_ms nrs_eh_timeout\n"
    "      nrs_hp_ratio nrs_hp_ops nrs_delay_pct nrs_delay_min nrs_delay_max;\n"
    "      mdt.<name> for each of these except ost<N>.nrs_policies, nrs_tbf_scope\n"
    "      and nrs_eh_timeout: the metadata service's request scheduler;\n"
    "      rtds_weight rtds_relative rtds_auto rtds_auto_factors pool.<name>\n"
    "      pool_rule.<name> pools pool_rules ost<N>.active job_stats (write 'clear')\n"
    "      job_cleanup_interval quota.u|g|p.<id> quota_grace; read-only: ost_count\n"
    "      ost_status ost_df metrics_address quota.\n"
    "  stripefs setstripe [-c COUNT] [-S SIZE] [-p POOL] [-o OST,...] PATH\n"
    "  stripefs getstripe PATH...\n"
    "      Sets the layout of a new file or a directory's default; shows layouts.\n"
    "  stripefs pool list MOUNTPOINT | pool set MOUNTPOINT NAME OSTS | pool remove MOUNTPOINT NAME\n"
    "      Lists, defines and removes OST pools.\n"
    "  stripefs ost add MOUNTPOINT PATH\n"
    "      Adds the directory PATH (created if missing, else empty; root only) to\n"
    "      the mounted filesystem as its next OST: labelled, stored, weight 1, in\n"
    "      no pool; new files may use it at once. PATH may be oss://ADDRESS:PORT/DIR,\n"
    "      a directory a stripefs oss serves (the mount needs -o key=FILE).\n"
    "  stripefs ost deactivate|activate MOUNTPOINT N\n"
    "      Stops or resumes placing new objects on OST N; its files stay usable.\n"
    "  stripefs setquota -u|-g|-p ID [-b BSOFT] [-B BHARD] [-i ISOFT] [-I IHARD] PATH\n"
    "  stripefs setquota -t [-b BLOCK_GRACE] [-i INODE_GRACE] PATH\n"
    "      Sets the byte (b) and inode (i) soft and hard limits of a user, group\n"
    "      or project (sizes take K, M, G, T, P of 1024, inode counts k, m, g,\n"
    "      t, p of 1000; 0 removes a limit; limits not given keep their value),\n"
    "      or the grace periods (seconds, or with s, m, h, d, w). Root or\n"
    "      admin_uid only.\n"
    "  stripefs quota [-u|-g|-p ID] [--json] PATH\n"
    "      Usage, limits and grace left (default: your user and group).\n"
    "  stripefs df [-h | -i] [--json] MOUNTPOINT\n"
    "      Space, inodes, weight and state per OST and in total, like lfs df.\n"
    "  stripefs jobstats MOUNTPOINT [--top N] [--sort bytes|ops] [--json]\n"
    "      The busiest jobs over every OST and the metadata service.\n"
    "  stripefs fsck META_DIR [--repair] [--key FILE [--tls-ca F --tls-cert F\n"
    "                --tls-key F]]   (--key: OSTs on OSSs are checked through them)\n"
    "      Checks an unmounted filesystem: entries, link counts, unlinked files,\n"
    "      objects that belong to no file, missing or too long objects, id marks.\n"
    "      One line per problem; --repair fixes what it can. Exit 0 clean,\n"
    "      1 all repaired, 4 problems left, 8 could not run, 16 usage error.\n"
    "  stripefs oss --listen ADDRESS:PORT --key FILE [--ost-threads N]\n"
    "               [--ost-timeout SECONDS] [--tls-cert FILE --tls-key FILE\n"
    "               [--tls-ca FILE]] [--log-level LEVEL] [--log-file PATH]\n"
    "               [-f] DIR [DIR ...]\n"
    "      Serves OST directories of this machine to mounts on others (an object\n"
    "      storage server; in the background unless -f; SIGTERM stops it). Every\n"
    "      call must prove the filesystem's key; the key file must be private.\n"
    "  stripefs mds --listen ADDRESS:PORT --key FILE [--admin-uid UID]\n"
    "               [--trusted ADDRESS[/BITS][,...]] [--callback-timeout SECONDS]\n"
    "               [--max-cached N] [--ost-threads N] [--ost-timeout SECONDS]\n"
    "               [--tls-cert FILE --tls-key FILE [--tls-ca FILE]]\n"
    "               [--log-level LEVEL] [--log-file PATH] [-f] META_DIR\n"
    "      Serves a filesystem's metadata to client mounts on any machine (a\n"
    "      metadata service; every OST must be on an OSS): they mount it with\n"
    "      stripefs mount -o key=FILE mds://ADDRESS:PORT MOUNTPOINT. A client that\n"
    "      leaves a call-back unanswered for --callback-timeout (10) is evicted.\n"
    "      Root of a client not in --trusted (none by default), or mounted with\n"
    "      root_squash, is nobody. A client caching more than --max-cached\n"
    "      (200000) inodes gives back those it was granted least recently.\n"
    "  stripefs key new FILE\n"
    "      Writes a new random shared key (mode 600) for mkfs, mount, oss and mds.\n"
    "  stripefs --version | --help\n";

void Usage() { fputs(kHelp, stderr); }

int Mkfs(const std::vector<std::string>& args) {
  sfs::fs::MkfsOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> const std::string* {
      return i + 1 < args.size() ? &args[++i] : nullptr;
    };
    if (arg == "--force") {
      options.force = true;
      continue;
    }
    const std::string* v = value();
    if (v == nullptr) return Fail("missing value after " + arg);
    if (arg == "--meta") {
      options.meta_dir = *v;
    } else if (arg == "--ost") {
      options.ost_dirs.push_back(*v);
    } else if (arg == "--key") {
      options.key_file = *v;
    } else if (arg == "--tls-ca") {
      options.tls_ca = *v;
    } else if (arg == "--tls-cert") {
      options.tls_cert = *v;
    } else if (arg == "--tls-key") {
      options.tls_key = *v;
    } else if (arg == "--stripe-count" || arg == "-c") {
      // Whole and unwrapped: stoul took "4294967297" as 1 and "2x" as 2.
      const auto [end, ec] =
          std::from_chars(v->data(), v->data() + v->size(), options.stripe_count);
      if (v->empty() || ec != std::errc() || end != v->data() + v->size()) {
        return Fail("bad stripe count '" + *v + "'");
      }
    } else if (arg == "--stripe-size" || arg == "-S") {
      auto size = sfs::layout::ParseSize(*v);
      if (!size.ok()) return Fail(size.status().message());
      options.stripe_size = *size;
    } else {
      Usage();
      return Fail("unknown mkfs argument " + arg);
    }
  }
  sfs::Status status = sfs::fs::Mkfs(options);
  if (!status.ok()) return Fail(status.ToString());
  printf("stripefs: formatted %s with %zu OSTs (default stripe_count=%u stripe_size=%llu)\n",
         options.meta_dir.c_str(), options.ost_dirs.size(), options.stripe_count,
         static_cast<unsigned long long>(options.stripe_size));
  return 0;
}

int Mount(const std::vector<std::string>& args) {
  sfs::fs::MountOptions options;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-f") {
      options.foreground = true;
    } else if (args[i] == "-o") {
      if (i + 1 >= args.size()) return Fail("missing value after -o");
      sfs::Status status = sfs::fs::ParseMountOption(args[++i], &options);
      if (!status.ok()) return Fail(status.ToString());
    } else if (args[i].rfind("-o", 0) == 0) {
      sfs::Status status = sfs::fs::ParseMountOption(args[i].substr(2), &options);
      if (!status.ok()) return Fail(status.ToString());
    } else {
      positional.push_back(args[i]);
    }
  }
  if (positional.size() != 2) {
    Usage();
    return 1;
  }
  options.meta_dir = positional[0];
  options.mountpoint = positional[1];
  return sfs::fs::RunMount(options);
}

int Umount(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    Usage();
    return 1;
  }
  execlp("fusermount3", "fusermount3", "-u", args[0].c_str(), static_cast<char*>(nullptr));
  return Fail(std::string("cannot run fusermount3: ") + strerror(errno));
}

}  // namespace

// As e2fsck: exit codes 1 and 4 mean something fsck found.
constexpr int kFsckUsage = 16;

int Fsck(const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "stripefs fsck META_DIR [--repair] [--key FILE [--tls-ca F --tls-cert F --tls-key F]]";
  sfs::fs::FsckOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string* file = arg == "--key"        ? &options.key_file
                        : arg == "--tls-ca"   ? &options.tls_ca
                        : arg == "--tls-cert" ? &options.tls_cert
                        : arg == "--tls-key"  ? &options.tls_key
                                              : nullptr;
    if (file != nullptr && i + 1 < args.size()) {
      *file = args[++i];
    } else if (arg == "--repair" || arg == "-y") {
      options.repair = true;
    } else if (options.meta_dir.empty() && !arg.empty() && arg[0] != '-') {
      options.meta_dir = arg;
    } else {
      Fail("fsck: unexpected argument '" + arg + "'; usage: " + kUsage);
      return kFsckUsage;
    }
  }
  if (options.meta_dir.empty()) {
    Fail(std::string("fsck: usage: ") + kUsage);
    return kFsckUsage;
  }
  return sfs::fs::RunFsck(options);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    Usage();
    return 1;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "mount" || command == "oss" || command == "mds") {
    // Daemons that move 1 MiB buffers all day: from the heap, where a freed
    // one is reused, rather than a fresh mmap each time (256 page faults
    // per MiB, a third of a 1 MiB call's CPU over the network; docs/design.md).
    // 32 MiB is the largest threshold glibc takes on 64-bit; the heap is
    // not trimmed below 256 MiB either, or a freed buffer at its top would
    // go back to the kernel and fault in anew.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  }
  if (command == "mkfs") return Mkfs(args);
  if (command == "mount") return Mount(args);
  if (command == "umount" || command == "unmount") return Umount(args);
  if (command == "set_param") return sfs::cli::SetParam(args);
  if (command == "get_param") return sfs::cli::GetParam(args);
  if (command == "setstripe") return sfs::cli::SetStripe(args);
  if (command == "getstripe") return sfs::cli::GetStripe(args);
  if (command == "pool") return sfs::cli::Pool(args);
  if (command == "df") return sfs::cli::Df(args);
  if (command == "setquota") return sfs::cli::SetQuota(args);
  if (command == "quota") return sfs::cli::Quota(args);
  if (command == "ost") return sfs::cli::Ost(args);
  if (command == "jobstats") return sfs::cli::JobStats(args);
  if (command == "fsck") return Fsck(args);
  if (command == "oss") return sfs::cli::Oss(args);
  if (command == "mds") return sfs::cli::Mds(args);
  if (command == "key") return sfs::cli::Key(args);
  if (command == "--help" || command == "-h" || command == "help") {
    fputs(kHelp, stdout);
    return 0;
  }
  if (command == "--version" || command == "version") {
    puts(sfs::fs::VersionString());
    return 0;
  }
  Usage();
  return 1;
}
