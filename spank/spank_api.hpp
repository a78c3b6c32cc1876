// spank.h for C++. Two traps seen with SLURM 22.05's header: it declares the
// slurm_spank_* callbacks outside its own extern "C" block (so it must be
// wrapped here), and SPANK_PLUGIN() defines const objects that get internal
// linkage in C++ (so plugin.cpp declares them extern "C" first).
#pragma once
#include <cstddef>  // NULL, used by SPANK_OPTIONS_TABLE_END

extern "C" {
#include <slurm/spank.h>
}
