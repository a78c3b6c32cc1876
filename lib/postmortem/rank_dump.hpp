// A rank's dump as gangway's torch hook writes it on SLURM's SIGTERM or a
// Python exception (torch-hook/gangway_torch_postmortem.py), into the job's
// user directory (GANGWAY_POSTMORTEM_DIR): the user's process wrote it, so it
// may only point at a rank of the user's own job (record.hpp's RankDump).
//   {"kind":"gangway-rank-dump","schema":1,"rank":5,
//    "entered":[1,2,3],"completed":[1,2],"exception":"ValueError: boom"}
#pragma once
#include <cstddef>
#include <string_view>

#include "record.hpp"

namespace gangway::postmortem {

inline constexpr std::size_t kMaxRankDumpBytes = 256 * 1024;

// Throws gangway::Error naming what is wrong: not that object, over
// kMaxRankDumpBytes, more than kMaxSeqs numbers in a list, an exception
// longer than kMaxRecordString (cut to it instead: it is one line of text).
RankDump parse_rank_dump(std::string_view json);

}  // namespace gangway::postmortem
