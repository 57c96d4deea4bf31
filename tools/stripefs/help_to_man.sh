#!/bin/sh
# Writes the stripefs(8) man page (roff) from `stripefs --help` and
# `stripefs --version`, so the page and --help never say different things.
#   help_to_man.sh STRIPEFS_BINARY > stripefs.8
set -eu
bin=$1
version=$("$bin" --version)
"$bin" --help | awk -v version="$version" '
  function roff(s) {  # escape what roff would take as its own
    gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s)
    if (s ~ /^[.\047]/) s = "\\&" s
    return s
  }
  NR == 1 {
    split($0, parts, " - ")
    print ".TH STRIPEFS 8 \"\" \"" version "\" \"System Administration\""
    print ".SH NAME"
    print "stripefs \\- " roff(parts[2])
    print ".SH SYNOPSIS"
    print ".B stripefs"
    print "\\fICOMMAND\\fR [\\fIARGUMENTS\\fR]"
    print ".SH COMMANDS"
    next
  }
  /^usage:/ || /^$/ { next }
  /^  stripefs / {   # a command: its synopsis line
    sub(/^  /, "")
    if (described) { print ".RE"; described = 0 }
    print (started ? ".br" : ".PP")
    started = 1
    print ".B " roff($0)
    next
  }
  /^        +/ {     # the continuation of a synopsis line
    sub(/^ +/, "")
    print ".br"
    print "\\ \\ \\ \\ " roff($0)
    next
  }
  /^      / {        # what the command above does
    sub(/^ +/, "")
    if (!described) { print ".RS"; described = 1 }
    print roff($0)
    started = 0
    next
  }
  { print roff($0) }
  END {
    if (described) print ".RE"
    print ".SH FILES"
    print "META_DIR/stripefs.log, the daemon\\(aqs log when it runs in the background."
    print ".SH SEE ALSO"
    print ".BR mount (8),"
    print ".BR fstab (5),"
    print ".BR fusermount3 (1)."
    print "The README and docs/design.md of stripefs say more about each setting."
  }
'
