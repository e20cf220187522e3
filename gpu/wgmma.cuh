/* SPDX-License-Identifier: Apache-2.0 */
/* Hopper's warpgroup matrix multiply (wgmma, sm_90a) and what feeds it: shared-memory matrix
 * descriptors for the 128-byte swizzled K-major layout, and the fences and waits around the
 * asynchronous multiply, used only inside `#if BD_HAVE_WGMMA` code; and the epilogues'
 * packing of halves and stmatrix (sm_90 on, the photo kernel's too).
 *
 * Layout: a tile of R rows (pixels, or output channels) x 64 halves of K, 128 bytes a row,
 * rows consecutive, the tile 1024-byte aligned; the 16-byte chunk c of row r lives at chunk
 * c ^ (r % 8) of that row (the hardware's 128-byte swizzle), so the 8 rows that one
 * multiply step reads together fall in different banks. */
#pragma once

#include <cuda_fp16.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BD_HAVE_WGMMA 1
#else
#define BD_HAVE_WGMMA 0
#endif

/* Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile. */
__device__ __forceinline__ uint32_t
sw128_offset (int row, int chunk)
{
	return (uint32_t) (row * 128 + ((chunk ^ (row & 7)) << 4));
}

/* The descriptor of a swizzled K-major tile at shared address `addr` (add 32 bytes per
 * 16-wide step along K): start address, the leading byte offset (unused by swizzled K-major
 * layouts, 1 by convention), the stride byte offset between 8-row groups (`group_bytes`:
 * 1024 where the rows are consecutive), swizzle mode 1 (128 bytes), base offset 0. Every
 * field counts 16-byte units. The swizzle follows the rows' shared-memory address bits (as
 * the copy engine's does), so a tile may start at any 128-byte row of a 1024-aligned region
 * and its groups lie any multiple of 128 bytes apart: measured, exact for row offsets 0-17
 * and groups 8, 10, 16 and 24 rows apart, and wrong with the base offset set. */
__device__ __forceinline__ uint64_t
sw128_descriptor (uint32_t addr, uint32_t group_bytes = 1024)
{
	return (uint64_t) ((addr & 0x3ffff) >> 4) | (uint64_t) 1 << 16 | (uint64_t) (group_bytes >> 4) << 32 |
	       (uint64_t) 1 << 62;
}

/* Two floats as one register of halves, the first in the low half (the lower column of an
 * accumulator fragment's pair). */
__device__ __forceinline__ uint32_t
pack_half2 (float lo, float hi)
{
	__half2 h = __floats2half2_rn (lo, hi);
	return *(uint32_t *) &h;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900   /* stmatrix: any sm_90, not only sm_90a */
/* Four 8 x 8 matrices of halves from the warp's registers into shared memory (stmatrix):
 * register j of each thread holds its pair of matrix j's fragment (row lane / 4, columns
 * (lane % 4) * 2 and + 1, as in an accumulator's 8 x 8 block), and thread t names where row
 * t % 8 of matrix t / 8 goes (16 bytes). TRANS stores each matrix transposed: row i is the
 * fragment's column i. One instruction where two-byte stores took eight. */
template <bool TRANS>
__device__ __forceinline__ void
stmatrix_x4 (uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
	if constexpr (TRANS)
		asm volatile ("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
		              ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
	else
		asm volatile ("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
		              ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}
#endif

#if BD_HAVE_WGMMA
__device__ __forceinline__ void wgmma_fence () { asm volatile ("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit () { asm volatile ("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void
wgmma_wait ()
{
	asm volatile ("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Shared memory written by the generic proxy (cp.async, ordinary stores) and read next by
 * wgmma (the async proxy) needs this fence in each writer before the barrier. */
__device__ __forceinline__ void
fence_proxy_async ()
{
	asm volatile ("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Keeps the compiler from moving accumulator reads or writes across the asynchronous
 * multiply, which reads and writes these registers behind its back. */
template <int R>
__device__ __forceinline__ void
wgmma_fence_operands (float (&d)[R])
{
#pragma unroll
	for (int i = 0; i < R; i++)
		asm volatile ("" : "+f"(d[i])::"memory");
}

/* d (64 x N, f32, the warpgroup's fragment) += A (64 x 16, f16) * B (16 x N, f16), both
 * read from shared memory through descriptors, both K-major. The operand lists name every
 * accumulator register: wgmma takes them one by one. */
#define BD_ACC8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
	"+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define BD_ACC32_AT(d, i) BD_ACC8 (d, i), BD_ACC8 (d, i + 8), BD_ACC8 (d, i + 16), BD_ACC8 (d, i + 24)
#define BD_ACC32(d) BD_ACC32_AT (d, 0)
#define BD_ACC64(d) BD_ACC32_AT (d, 0), BD_ACC32_AT (d, 32)
#define BD_ACC128(d) BD_ACC32_AT (d, 0), BD_ACC32_AT (d, 32), BD_ACC32_AT (d, 64), BD_ACC32_AT (d, 96)

template <int N> struct wgmma_f16;

template <> struct wgmma_f16<64> {
	static __device__ __forceinline__ void
	mma (float (&d)[32], uint64_t a, uint64_t b)
	{
		asm volatile ("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
			"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
			"}, %32, %33, p, 1, 1, 0, 0;\n}\n"
		              : BD_ACC32 (d)
		              : "l"(a), "l"(b), "n"(1));
	}
};

template <> struct wgmma_f16<128> {
	static __device__ __forceinline__ void
	mma (float (&d)[64], uint64_t a, uint64_t b)
	{
		asm volatile ("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
			"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
			"}, %64, %65, p, 1, 1, 0, 0;\n}\n"
		              : BD_ACC64 (d)
		              : "l"(a), "l"(b), "n"(1));
	}
};

template <> struct wgmma_f16<256> {
	static __device__ __forceinline__ void
	mma (float (&d)[128], uint64_t a, uint64_t b)
	{
		asm volatile ("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
			"wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
		"%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
			"}, %128, %129, p, 1, 1, 0, 0;\n}\n"
		              : BD_ACC128 (d)
		              : "l"(a), "l"(b), "n"(1));
	}
};

/* d (64 x N, f32) += A (64 x 8) * B (8 x N), tf32 operands (fp32 values whose low 13 mantissa
 * bits the tensor cores ignore), both K-major in shared memory. */
template <int N> struct wgmma_tf32;

template <> struct wgmma_tf32<64> {
	static __device__ __forceinline__ void
	mma (float (&d)[32], uint64_t a, uint64_t b)
	{
		asm volatile ("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
			"wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
			"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
			"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
			"}, %32, %33, p, 1, 1;\n}\n"
		              : BD_ACC32 (d)
		              : "l"(a), "l"(b), "n"(1));
	}
};

template <> struct wgmma_tf32<128> {
	static __device__ __forceinline__ void
	mma (float (&d)[64], uint64_t a, uint64_t b)
	{
		asm volatile ("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
			"wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
			"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
			"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
			"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
			"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
			"}, %64, %65, p, 1, 1;\n}\n"
		              : BD_ACC64 (d)
		              : "l"(a), "l"(b), "n"(1));
	}
};

#endif
