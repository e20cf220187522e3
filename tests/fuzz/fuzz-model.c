/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: the model loader, then a session and a forward pass on a tiny input.
 * Most mutations break the checksum, which is refused first; so each input is also tried
 * with its file size and checksum made right, to reach the checks behind them. */
#include "backdrop-private.h"
#include "synthetic-model.h"

#include <stdlib.h>
#include <string.h>

static void
run_model (const bd_model *m)
{
	uint32_t side = 1u << (m->depth - 1);
	/* Bound the work a fuzzed model can ask for: weights times pixels. */
	uint64_t weights = 0;
	for (uint32_t l = 0; l < m->depth; l++)
		weights += (uint64_t) m->widths[l] * m->widths[l] * 18;
	if (weights * side * side > 50u * 1000 * 1000)
		return;
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.threads = 1;
	bd_session *s = NULL;
	if (bd_session_new (m, &o, &s, NULL) != BD_OK)
		return;
	float *in = calloc ((size_t) 3 * side * side, sizeof *in), *out = calloc ((size_t) side * side, sizeof *out);
	if (in && out) {
		for (size_t i = 0; i < (size_t) 3 * side * side; i++)
			in[i] = (float) (i % 7) - 3.0f;
		if (bd_session_forward (s, in, side, side, out, NULL) == BD_OK)
			for (size_t i = 0; i < (size_t) side * side; i++)
				if (!(out[i] >= 0 && out[i] <= 1))
					abort ();   /* a sigmoid's output, NaN included, must lie in [0, 1] */
	}
	free (in);
	free (out);
	bd_session_free (s);
}

static void
try_load (const uint8_t *data, size_t size)
{
	bd_model *m = NULL;
	bd_error err = { 0 };
	if (bd_model_load_bytes (data, size, "fuzz.bdm", &m, &err) == BD_OK) {
		run_model (m);
		bd_model_free (m);
	} else if (m != NULL || err.message[0] == '\0') {
		abort ();   /* a failure leaves no model and always says why */
	}
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
	try_load (data, size);
	if (size < BD_SYN_HEADER_SIZE)
		return 0;
	uint8_t *fixed = malloc (size);
	if (!fixed)
		return 0;
	memcpy (fixed, data, size);
	uint64_t s64 = size;
	memcpy (fixed + BD_SYN_OFFSET_FILE_SIZE, &s64, 8);
	bd_synthetic_model_fix_checksum (fixed, size);
	try_load (fixed, size);
	free (fixed);
	return 0;
}
