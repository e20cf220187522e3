// SPDX-License-Identifier: Apache-2.0
// The BACKDROP_GPU_* switches: developer settings that turn a kernel family off or force a
// tile, to compare kernels and to find a fault (docs/ARCHITECTURE.md has the table). Read
// from the environment once per process, here alone; the kernels' files ask for the values.
#pragma once

struct bd_gpu_switches {
	bool        no_wgmma;       // BACKDROP_GPU_NO_WGMMA=1: no wgmma kernels (conv2d-hopper.cu, conv2d-tma.cu)
	bool        no_tma;         // BACKDROP_GPU_NO_TMA=1: no TMA kernels (conv2d-tma.cu)
	bool        no_photo_conv;  // BACKDROP_GPU_NO_PHOTO_CONV=1: the first layer by the general kernels
	bool        simple_conv;    // BACKDROP_GPU_SIMPLE_CONV=1: only the plain tensor-core kernel
	bool        no_pdl;         // BACKDROP_GPU_NO_PDL=1: kernels start only after the one before
	bool        wide_pixels;    // BACKDROP_GPU_WIDE_PIXELS=0 turns the 256-pixel tiles off
	bool        swapped_up;     // BACKDROP_GPU_SWAPPED_UP=1 turns the swapped up-convolutions on
	bool        resident_128;   // BACKDROP_GPU_RESIDENT_128=0 turns the resident 64 -> 128 kernel off
	bool        turns;          // BACKDROP_GPU_TURNS=0: the resident kernels' warpgroups take no turns
	bool        wide_boxes;     // BACKDROP_GPU_WIDE_BOXES=0: the resident 3x3 kernels copy a box a column of taps
	bool        cluster_sums;   // BACKDROP_GPU_CLUSTER_SUMS=0: split K's parts summed by the reduce kernel
	int         wide_split;     // BACKDROP_GPU_WIDE_SPLIT=N, or -1 for the kernel's own default
	int         split_steps;    // BACKDROP_GPU_SPLIT_STEPS=N, or -1 for the kernel's own default
	long        splitk;         // BACKDROP_GPU_SPLITK=N: split K for layers of at most N tiles (66)
	const char *tile;           // BACKDROP_GPU_TILE=NAME forces a tile; NULL: chosen per layer
};

// The switches, read at the first call (thread-safe).
const bd_gpu_switches &bd_gpu_switches_get ();
