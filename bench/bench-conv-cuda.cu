/* SPDX-License-Identifier: Apache-2.0 */
/* One 3x3 convolution layer on the GPU, ours in fast (fp16 tensor cores) and exact (fp32)
 * precision, on the seed's per-layer table: batch 4 of C_in x H x W -> C_out, timed with CUDA
 * events (median of 50 after warm-up) on random data. The batch of 4 runs as the backend runs
 * one (four images stacked, each with its own zero border); the 3-channel layer is stored
 * padded to 16 channels, but its FLOPs are counted for 3. Prints ms and TFLOP/s per layer.
 *
 *   bench-conv-cuda            (bench/torch_conv.py gives PyTorch's figures for the same table) */
#include "../gpu/conv2d.cuh"

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

static const int table[][3] = {
	{ 3, 64, 512 }, { 64, 64, 512 }, { 64, 128, 256 }, { 128, 128, 256 }, { 128, 256, 128 },
	{ 256, 256, 128 }, { 256, 512, 64 }, { 512, 512, 64 }, { 512, 1024, 32 }, { 1024, 1024, 32 },
};

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf (stderr, "%s: %s\n", #x, cudaGetErrorString (e_)); exit (1); } } while (0)

__global__ void
fill_random (uint8_t *p, size_t n, size_t el, uint32_t seed, bool half)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	uint32_t h = (uint32_t) i * 2654435761u ^ seed;
	h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
	float v = (float) (h & 0xffff) / 65536.0f - 0.5f;
	if (half)
		((__half *) p)[i] = __float2half (v);
	else
		((float *) p)[i] = v;
}

/* The K-major copy of [K][cout] weights that the Hopper kernels read: [cout][K]; for fp32
 * also what tf32 drops of each (as the CUDA backend packs them). */
template <typename E>
__global__ void
transpose (const E *w, E *wk, float *small, size_t K, size_t cout)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= K * cout)
		return;
	size_t j = (i % cout) * K + i / cout;
	wk[j] = w[i];
	if (small)
		small[j] = (float) w[i] - __uint_as_float (__float_as_uint ((float) w[i]) & 0xffffe000u);
}

static double
time_conv (const bd_gpu_conv2d_params *p, bd_precision precision, cudaStream_t stream, cudaEvent_t t0,
           cudaEvent_t t1)
{
	bd_error err = { BD_OK, "" };
	std::vector<float> times;
	for (int r = 0; r < 60; r++) {
		CHECK (cudaEventRecord (t0, stream));
		if (bd_gpu_conv2d (p, precision, stream, &err) != BD_OK) {
			fprintf (stderr, "bench-conv-cuda: %s\n", err.message);
			exit (1);
		}
		CHECK (cudaEventRecord (t1, stream));
		CHECK (cudaEventSynchronize (t1));
		float t;
		CHECK (cudaEventElapsedTime (&t, t0, t1));
		if (r >= 10)
			times.push_back (t);
	}
	std::sort (times.begin (), times.end ());
	return times[times.size () / 2];
}

int
main (void)
{
	bd_error err = { BD_OK, "" };
	if (bd_gpu_conv2d_hopper_init (&err) != BD_OK) {
		fprintf (stderr, "bench-conv-cuda: %s\n", err.message);
		return 1;
	}
	printf ("%-22s %10s %9s %10s %9s %12s\n", "layer (batch 4)", "fast ms", "TFLOP/s", "exact ms", "TFLOP/s",
	        "fast vs exact");
	cudaStream_t stream;
	CHECK (cudaStreamCreate (&stream));
	cudaEvent_t t0, t1;
	CHECK (cudaEventCreate (&t0));
	CHECK (cudaEventCreate (&t1));
	for (const auto &row : table) {
		uint32_t cin = row[0], cout = row[1], size = row[2], cs = bd_pad16 (cin);
		double flop = 2.0 * 9 * cin * cout * 4.0 * size * size;
		size_t npx = (size_t) 4 * size * size, nw = (size_t) 9 * cs * cout;
		uint8_t *in[2], *out[2], *w[2], *wk[2];
		float *bias, *wk_small;
		double ms[2];
		/* The same random values in both precisions (rounded to half for fast). */
		for (int pr = 0; pr < 2; pr++) {
			size_t el = pr == 0 ? 2 : 4;
			CHECK (cudaMalloc (&in[pr], npx * cs * el));
			CHECK (cudaMalloc (&out[pr], npx * cout * el));
			CHECK (cudaMalloc (&w[pr], nw * el));
			fill_random<<<bd_div_up (npx * cs, 256), 256>>> (in[pr], npx * cs, el, 1, pr == 0);
			/* Padding channels hold zeros, as in the backend's buffers. */
			if (cs > cin)
				CHECK (cudaMemset2D (in[pr] + cin * el, cs * el, 0, (cs - cin) * el, npx));
			fill_random<<<bd_div_up (nw, 256), 256>>> (w[pr], nw, el, 2, pr == 0);
		}
		CHECK (cudaMalloc (&wk[0], nw * 2));
		CHECK (cudaMalloc (&wk[1], nw * 4));
		CHECK (cudaMalloc (&wk_small, nw * 4));
		CHECK (cudaMalloc (&bias, cout * sizeof (float)));
		size_t K = (size_t) 9 * cs;
		transpose<<<bd_div_up (nw, 256), 256>>> ((const __half *) w[0], (__half *) wk[0], nullptr, K, cout);
		transpose<<<bd_div_up (nw, 256), 256>>> ((const float *) w[1], (float *) wk[1], wk_small, K, cout);
		fill_random<<<bd_div_up (cout, 256), 256>>> ((uint8_t *) bias, cout, 4, 3, false);
		CHECK (cudaGetLastError ());
		for (int pr = 0; pr < 2; pr++) {
			bd_gpu_conv2d_params p = {};
			p.in = { in[pr], 4 * size, size, cs, cs };
			p.out = { out[pr], 4 * size, size, cout, cout };
			p.out_step = 1;
			p.taps = 9;
			p.weights = w[pr];
			p.bias = bias;
			p.relu = true;
			p.weights_k = wk[pr];
			p.weights_k_small = pr == 1 ? wk_small : nullptr;
			p.image_height = size;
			p.in_used = cin;
			ms[pr] = time_conv (&p, pr == 0 ? BD_PRECISION_FAST : BD_PRECISION_EXACT, stream, t0, t1);
		}
		/* ||fast - exact|| / ||exact|| over the whole output: half rounding gives ~1e-3, a
		 * wrong index gives ~1. */
		std::vector<__half> hf (npx * cout);
		std::vector<float> ex (npx * cout);
		CHECK (cudaMemcpy (hf.data (), out[0], hf.size () * 2, cudaMemcpyDeviceToHost));
		CHECK (cudaMemcpy (ex.data (), out[1], ex.size () * 4, cudaMemcpyDeviceToHost));
		double num = 0, den = 0;
		for (size_t i = 0; i < ex.size (); i++) {
			double d = (double) __half2float (hf[i]) - ex[i];
			num += d * d;
			den += (double) ex[i] * ex[i];
		}
		for (int pr = 0; pr < 2; pr++) {
			cudaFree (in[pr]);
			cudaFree (out[pr]);
			cudaFree (w[pr]);
		}
		cudaFree (wk[0]);
		cudaFree (wk[1]);
		cudaFree (wk_small);
		cudaFree (bias);
		char name[64];
		snprintf (name, sizeof name, "%ux%u@%u", cin, cout, size);
		printf ("%-22s %10.3f %9.1f %10.3f %9.1f %12.2e\n", name, ms[0], flop / ms[0] / 1e9, ms[1],
		        flop / ms[1] / 1e9, sqrt (num / den));
	}
	return 0;
}
