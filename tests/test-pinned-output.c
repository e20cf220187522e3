/* SPDX-License-Identifier: Apache-2.0 */
/* The element's output buffers (gst/pinned-output.c), on a CPU session (whose host memory is
 * plain, the bookkeeping the same as a GPU's): a buffer given back is used again, new caps
 * drop the spares, and the session outlives the element while downstream holds buffers. */
#include "pinned-output.h"

#include <string.h>

static const char *root;

static void
test_reuse_and_lifetime (void)
{
	g_autofree char *path = g_build_filename (root, "data", "backdrop-portrait.bdm", NULL);
	bd_model *model = NULL;
	bd_session *session = NULL;
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.threads = 1;
	g_assert_cmpint (bd_model_open (path, &model, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_new (model, &o, &session, NULL), ==, BD_OK);
	BdPinnedOutput *out = bd_pinned_output_new (model, session);

	GstBuffer *a = bd_pinned_output_buffer (out, 4096), *b = bd_pinned_output_buffer (out, 4096);
	g_assert_nonnull (a);
	g_assert_nonnull (b);
	g_assert_cmpuint (gst_buffer_get_size (a), ==, 4096);
	GstMapInfo map;
	g_assert_true (gst_buffer_map (a, &map, GST_MAP_WRITE));
	memset (map.data, 7, map.size);
	guint8 *memory_a = map.data;
	gst_buffer_unmap (a, &map);
	gst_buffer_unref (a);
	/* The memory given back is the next buffer's. */
	GstBuffer *c = bd_pinned_output_buffer (out, 4096);
	g_assert_true (gst_buffer_map (c, &map, GST_MAP_READ));
	g_assert_true (map.data == memory_a);
	gst_buffer_unmap (c, &map);
	gst_buffer_unref (c);
	/* Another size (new caps): not the old memory. */
	GstBuffer *d = bd_pinned_output_buffer (out, 8192);
	g_assert_cmpuint (gst_buffer_get_size (d), ==, 8192);
	/* The element stops while downstream still holds b and d: both stay usable, and the
	 * session goes with the last of them (the sanitizer build would see a use after free). */
	bd_pinned_output_release (out);
	g_assert_true (gst_buffer_map (b, &map, GST_MAP_WRITE));
	memset (map.data, 9, map.size);
	gst_buffer_unmap (b, &map);
	gst_buffer_unref (b);
	g_assert_true (gst_buffer_map (d, &map, GST_MAP_WRITE));
	memset (map.data, 9, map.size);
	gst_buffer_unmap (d, &map);
	gst_buffer_unref (d);
}

int
main (int argc, char **argv)
{
	gst_init (&argc, &argv);
	g_test_init (&argc, &argv, NULL);
	root = g_getenv ("BACKDROP_SOURCE_ROOT");
	g_assert_nonnull (root);
	g_test_add_func ("/gst/pinned-output/reuse-and-lifetime", test_reuse_and_lifetime);
	return g_test_run ();
}
