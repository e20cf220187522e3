/* One 3x3 convolution layer on the GPU, ours in fast (fp16 tensor cores) and exact (fp32)
 * precision, on the seed's per-layer table: batch 4 of C_in x H x W -> C_out, timed with CUDA
 * events (median of 50 after warm-up) on random data. The batch runs as one image four times
 * as tall (the same GEMM: 4 x H x W pixels); the 3-channel layer is stored padded to 16
 * channels, but its FLOPs are counted for 3. Prints ms and TFLOP/s per layer.
 *
 *   bench-conv-cuda            (bench/torch_conv.py gives PyTorch's figures for the same table) */
#include "../gpu/conv2d.cuh"

#include <algorithm>
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

int
main (void)
{
	printf ("%-22s %10s %9s %10s %9s\n", "layer (batch 4)", "fast ms", "TFLOP/s", "exact ms", "TFLOP/s");
	cudaStream_t stream;
	CHECK (cudaStreamCreate (&stream));
	cudaEvent_t t0, t1;
	CHECK (cudaEventCreate (&t0));
	CHECK (cudaEventCreate (&t1));
	for (const auto &row : table) {
		uint32_t cin = row[0], cout = row[1], size = row[2], cs = bd_pad16 (cin);
		double flop = 2.0 * 9 * cin * cout * 4.0 * size * size;
		double ms[2];
		for (int pr = 0; pr < 2; pr++) {
			bd_precision precision = pr == 0 ? BD_PRECISION_FAST : BD_PRECISION_EXACT;
			size_t el = bd_precision_size (precision), npx = (size_t) 4 * size * size;
			uint8_t *in, *out, *w;
			float *bias;
			CHECK (cudaMalloc (&in, npx * cs * el));
			CHECK (cudaMalloc (&out, npx * cout * el));
			CHECK (cudaMalloc (&w, (size_t) 9 * cs * cout * el));
			CHECK (cudaMalloc (&bias, cout * sizeof (float)));
			fill_random<<<bd_div_up (npx * cs, 256), 256>>> (in, npx * cs, el, 1, pr == 0);
			fill_random<<<bd_div_up ((size_t) 9 * cs * cout, 256), 256>>> (w, (size_t) 9 * cs * cout, el, 2, pr == 0);
			fill_random<<<bd_div_up (cout, 256), 256>>> ((uint8_t *) bias, cout, 4, 3, false);
			bd_gpu_conv2d_params p = {
				{ in, 4 * size, size, cs, cs }, { out, 4 * size, size, cout, cout }, 1, 9, w, bias, true,
			};
			bd_error err = { BD_OK, "" };
			std::vector<float> times;
			for (int r = 0; r < 60; r++) {
				CHECK (cudaEventRecord (t0, stream));
				if (bd_gpu_conv2d (&p, precision, stream, &err) != BD_OK) {
					fprintf (stderr, "bench-conv-cuda: %s\n", err.message);
					return 1;
				}
				CHECK (cudaEventRecord (t1, stream));
				CHECK (cudaEventSynchronize (t1));
				float t;
				CHECK (cudaEventElapsedTime (&t, t0, t1));
				if (r >= 10)
					times.push_back (t);
			}
			std::sort (times.begin (), times.end ());
			ms[pr] = times[times.size () / 2];
			cudaFree (in); cudaFree (out); cudaFree (w); cudaFree (bias);
		}
		char name[64];
		snprintf (name, sizeof name, "%ux%u@%u", cin, cout, size);
		printf ("%-22s %10.3f %9.1f %10.3f %9.1f\n", name, ms[0], flop / ms[0] / 1e9, ms[1], flop / ms[1] / 1e9);
	}
	return 0;
}
