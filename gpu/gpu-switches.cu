// SPDX-License-Identifier: Apache-2.0
// The BACKDROP_GPU_* switches read once (gpu-switches.cuh). A flag is on when set to anything
// but empty or "0"; a default-on setting is off only when set to "0".
#include <cstdlib>
#include <cstring>

#include <pthread.h>

#include "gpu-switches.cuh"

namespace {

bool
flag (const char *name)
{
	const char *v = getenv (name);
	return v && *v && strcmp (v, "0");
}

bool
unless_zero (const char *name)
{
	const char *v = getenv (name);
	return !(v && !strcmp (v, "0"));
}

long
number (const char *name, long unset)
{
	const char *v = getenv (name);
	return v && *v ? strtol (v, nullptr, 10) : unset;
}

bd_gpu_switches
read_switches ()
{
	bd_gpu_switches s;
	s.no_wgmma = flag ("BACKDROP_GPU_NO_WGMMA");
	s.no_tma = flag ("BACKDROP_GPU_NO_TMA");
	s.no_photo_conv = flag ("BACKDROP_GPU_NO_PHOTO_CONV");
	s.simple_conv = flag ("BACKDROP_GPU_SIMPLE_CONV");
	s.no_pdl = flag ("BACKDROP_GPU_NO_PDL");
	s.wide_pixels = unless_zero ("BACKDROP_GPU_WIDE_PIXELS");
	s.swapped_up = flag ("BACKDROP_GPU_SWAPPED_UP");
	s.resident_128 = unless_zero ("BACKDROP_GPU_RESIDENT_128");
	s.turns = unless_zero ("BACKDROP_GPU_TURNS");
	s.wide_boxes = unless_zero ("BACKDROP_GPU_WIDE_BOXES");
	s.cluster_sums = unless_zero ("BACKDROP_GPU_CLUSTER_SUMS");
	s.wide_split = (int) number ("BACKDROP_GPU_WIDE_SPLIT", -1);
	s.split_steps = (int) number ("BACKDROP_GPU_SPLIT_STEPS", -1);
	long splitk = number ("BACKDROP_GPU_SPLITK", 66);
	s.splitk = splitk < 0 ? 0 : splitk;
	const char *tile = getenv ("BACKDROP_GPU_TILE");
	s.tile = tile && *tile ? tile : nullptr;
	return s;
}

bd_gpu_switches switches;
pthread_once_t  switches_once = PTHREAD_ONCE_INIT;

void
init_switches ()
{
	switches = read_switches ();
}

} // namespace

const bd_gpu_switches &
bd_gpu_switches_get ()
{
	// pthread_once: the build has no thread-safe statics (-fno-threadsafe-statics).
	pthread_once (&switches_once, init_switches);
	return switches;
}
