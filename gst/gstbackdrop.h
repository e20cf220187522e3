/* SPDX-License-Identifier: Apache-2.0 */
/* The `backdrop` element: a person's background removed or replaced in raw video. */
#pragma once

#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_BACKDROP (gst_backdrop_get_type ())
G_DECLARE_FINAL_TYPE (GstBackdrop, gst_backdrop, GST, BACKDROP, GstVideoFilter)

GST_ELEMENT_REGISTER_DECLARE (backdrop);

G_END_DECLS
