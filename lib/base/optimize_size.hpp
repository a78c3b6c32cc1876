// Included first into every file of the plugin and of libgangway_core
// (Makefile.am's PLUGIN_OPT: `-include` of this file), whatever optimisation
// level the build's CXXFLAGS give (they come last on automake's command line,
// so a flag could not override them): their functions, and the templates
// they instantiate, are compiled for size. Every srun, sbatch, salloc and
// slurmstepd maps the plugin, while what it runs is a few hundred thousand
// instructions a step: -Os made it 32 % smaller (630,776 -> 426,048 bytes
// stripped) for 9-14 % more instructions on its path, tens of microseconds a
// step (BENCHMARKS.md, "The plugin's size"). GCC's pragma; clang has none
// and builds at the level its flags say.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("Os")
#endif
