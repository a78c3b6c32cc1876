// A rank's dump as gangway's torch hook writes it on SLURM's SIGTERM or a
// Python exception (torch-hook/gangway_torch_postmortem.py), into the job's
// user directory (GANGWAY_POSTMORTEM_DIR): the user's process wrote it, so it
// may only point at a rank of the user's own job (record.hpp's RankDump).
//   {"kind":"gangway-rank-dump","schema":3,"rank":5,
//    "groups":{"0":{"entered":[1,2,3],"completed":[1,2],
//                   "timed":[[2,1795000000100000000,0,0],[3,1795000000200000000,0,0]]},
//              "1":{"entered":[7],"completed":[]}},
//    "exception":"ValueError: boom"}
// Each process group numbers its collectives on its own (Flight Recorder's
// collective_seq_id), so the dump keeps them apart by the group's name. A
// schema-1 dump (an earlier hook) has one "entered" and "completed" list; a
// schema-2 one has no "timed". "timed" keeps, for the group's newest
// kMaxTimed collectives, [seq, time_created_ns, time_discovered_started_ns,
// time_discovered_completed_ns] from the Flight Recorder (the node's clock; a
// time it did not record is 0 or null).
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "record.hpp"

namespace gangway::postmortem {

inline constexpr std::size_t kMaxRankDumpBytes = 256 * 1024;

inline constexpr std::size_t kMaxGroups = 32;
inline constexpr std::size_t kMaxTimedRows = 8 * kMaxTimed;  // every group's timed collectives together (the hook times 8 groups)

// One RankDump per process group (one with group "" for schema 1), each with
// the rank and the exception. Throws gangway::Error naming what is wrong: not
// that object, over kMaxRankDumpBytes, more than kMaxSeqs numbers in a list,
// more than kMaxGroups groups, more than kMaxTimed timed collectives in a
// group or kMaxTimedRows in all, a row that is not [seq, times...], more
// values, lists or objects than those, a group name that is not 1 to kMaxGroupName
// printable bytes. An exception longer than kMaxRecordString is cut to it
// (it is one line of text).
std::vector<RankDump> parse_rank_dump(std::string_view json);

}  // namespace gangway::postmortem
