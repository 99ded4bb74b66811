#pragma once
// Clang's thread-safety annotations (-Wthread-safety), empty for other compilers: a member
// says which mutex guards it, so that Clang can check every access holds it.
#if defined(__clang__)
#define DROVER_GUARDED_BY(m) __attribute__((guarded_by(m)))
#else
#define DROVER_GUARDED_BY(m)
#endif
