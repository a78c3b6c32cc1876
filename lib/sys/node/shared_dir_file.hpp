// The atomic writer and the owned-file reader are the file module's
// (file.hpp); this name stays for the includes of files other work is
// changing at the same time, and goes when they move to file.hpp.
#pragma once
#include "file.hpp"
