/* SPDX-License-Identifier: Apache-2.0 */
/* One photo being worked on: the photo, the network's mask, the user's brush marks and
 * settings, the undo history, and the composited result as a texture. Loading, segmentation
 * and compositing run in GTask threads; properties change on the main thread only. */
#pragma once

#include <gtk/gtk.h>

#include "bd-engine.h"

G_BEGIN_DECLS

typedef enum {
  BD_DOCUMENT_STATE_EMPTY,
  BD_DOCUMENT_STATE_LOADING,
  BD_DOCUMENT_STATE_SEGMENTING,
  BD_DOCUMENT_STATE_READY,
  BD_DOCUMENT_STATE_STOPPED,   /* the user cancelled the removal */
  BD_DOCUMENT_STATE_FAILED,
} BdDocumentState;

typedef enum {
  BD_MARK_NONE = 0,
  BD_MARK_KEEP,
  BD_MARK_REMOVE,
  /* Values from here up are the edge-aware brush's: an alpha the user decided, stored as
   * BD_MARK_SOFT + alpha * 252 / 255 (see bd_mark_decide()). */
  BD_MARK_SOFT,
} BdMark;

/* What the canvas shows: the photo as it came, the result, or the mask as the user edited
 * it: in black and white, as red over what is removed, and the places where it is undecided
 * away from its edges (transparent elsewhere, drawn over the others). The last three exist
 * while bd_document_set_mask_views() is on. */
typedef enum {
  BD_LAYER_ORIGINAL,
  BD_LAYER_RESULT,
  BD_LAYER_MASK,
  BD_LAYER_OVERLAY,
  BD_LAYER_UNSURE,
} BdLayer;

#define BD_LAYER_N (BD_LAYER_UNSURE + 1)

/* The long side of the previews the canvas draws when the photo is shown smaller than
 * that; bigger photos are drawn through bd_document_render_view_async(). */
#define BD_DOCUMENT_PREVIEW_SIZE 2048

#define BD_TYPE_DOCUMENT_STATE (bd_document_state_get_type ())
GType bd_document_state_get_type (void);

#define BD_TYPE_DOCUMENT (bd_document_get_type ())

G_DECLARE_FINAL_TYPE (BdDocument, bd_document, BD, DOCUMENT, GObject)

BdDocument      *bd_document_new                (BdEngine            *engine);

/* Each of these replaces the photo and starts the removal. */
void             bd_document_open_file          (BdDocument          *self,
                                                 GFile               *file);
void             bd_document_open_bytes         (BdDocument          *self,
                                                 GBytes              *bytes,
                                                 const char          *title);
/* A photo whose mask is already known (from the batch list): no removal runs. */
void             bd_document_open_with_mask     (BdDocument          *self,
                                                 GFile               *file,
                                                 GBytes              *mask,
                                                 const char          *device,
                                                 double               seconds);
void             bd_document_cancel             (BdDocument          *self);
/* Runs the removal again on the current photo: after a cancel or a failure, or with a
 * changed setting (Keep Passers-By, the device). Brush marks, settings and the undo history
 * stay; cancelled, a document that had a mask keeps it. */
void             bd_document_retry              (BdDocument          *self);

BdDocumentState  bd_document_get_state          (BdDocument          *self);
double           bd_document_get_progress       (BdDocument          *self);
const char      *bd_document_get_title          (BdDocument          *self);
GFile           *bd_document_get_file           (BdDocument          *self);
int              bd_document_get_width          (BdDocument          *self);
int              bd_document_get_height         (BdDocument          *self);
const char      *bd_document_get_device_description (BdDocument      *self);
double           bd_document_get_seconds        (BdDocument          *self);
const char      *bd_document_get_error_message  (BdDocument          *self);
/* Full size. Drawing these uploads every pixel, so the canvas draws previews or views. */
GdkTexture      *bd_document_get_original       (BdDocument          *self);
GdkTexture      *bd_document_get_result         (BdDocument          *self);
/* At most BD_DOCUMENT_PREVIEW_SIZE on the long side (the full texture when smaller). */
GdkTexture      *bd_document_get_preview        (BdDocument          *self,
                                                 BdLayer              layer);
/* The part (@x, @y, @width, @height) of a layer (not BD_LAYER_UNSURE), as it is now, resampled to @out_width x
 * @out_height: what the canvas shows of a big photo when zoomed in. */
void             bd_document_render_view_async  (BdDocument          *self,
                                                 BdLayer              layer,
                                                 int                  x,
                                                 int                  y,
                                                 int                  width,
                                                 int                  height,
                                                 int                  out_width,
                                                 int                  out_height,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
GdkTexture      *bd_document_render_view_finish (BdDocument          *self,
                                                 GAsyncResult        *result,
                                                 GError             **error);
/* Whether results come with the mask's layers (off by default: they cost time per edit). */
void             bd_document_set_mask_views     (BdDocument          *self,
                                                 gboolean             mask_views);
/* The share of the photo that BD_LAYER_UNSURE marks, 0..1. */
double           bd_document_get_unsure_fraction (BdDocument         *self);
/* The edit that the current result shows; compare with bd_document_paint_stroke()'s. */
guint64          bd_document_get_result_serial  (BdDocument          *self);
/* The edit that the previews show (at least the result's). */
guint64          bd_document_get_preview_serial (BdDocument          *self);
gboolean         bd_document_get_busy           (BdDocument          *self);
/* The network's mask, width x height bytes; NULL until it is known. */
GBytes          *bd_document_get_mask           (BdDocument          *self);

/* Crop to the subject (a BdCrop), applied when saving and copying; undoable. */
guint            bd_document_get_crop           (BdDocument          *self);
void             bd_document_set_crop           (BdDocument          *self,
                                                 guint                crop);
/* The crop's frame in photo pixels; FALSE when there is none (no crop, nothing kept). */
gboolean         bd_document_get_crop_frame     (BdDocument          *self,
                                                 GdkRectangle        *frame);

/* Mask edits. @radius is in photo pixels, @points in photo coordinates. Returns the serial
 * of the edit (0 when nothing changed). */
guint64          bd_document_paint_stroke       (BdDocument             *self,
                                                 BdMark                  mark,
                                                 double                  radius,
                                                 const graphene_point_t *points,
                                                 guint                   n_points);
/* The same with a hardness (0..1): below 1 the stroke is edge-aware, its alpha follows the
 * photo's edges around it (bd-edge-brush.c); 1 is the plain brush above. */
guint64          bd_document_paint_stroke_edge  (BdDocument             *self,
                                                 BdMark                  mark,
                                                 double                  radius,
                                                 const graphene_point_t *points,
                                                 guint                   n_points,
                                                 double                  hardness);
/* Keeps or removes the whole region under photo point (@x, @y): the connected part of the
 * mask on the clicked side (for a removed part, also within the photo's edges), grown
 * through the undecided pixels around it whose alpha falls off away from it. A part that is kept is
 * removed and the other way round; one undoable edit, made once the region is found (in a
 * worker). The result is the edit's serial (0: nothing changed). */
void             bd_document_toggle_region_async  (BdDocument          *self,
                                                   double               x,
                                                   double               y,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
guint64          bd_document_toggle_region_finish (BdDocument          *self,
                                                   GAsyncResult        *result,
                                                   GError             **error);
gboolean         bd_document_get_can_undo       (BdDocument          *self);
gboolean         bd_document_get_can_redo       (BdDocument          *self);
void             bd_document_undo               (BdDocument          *self);
void             bd_document_redo               (BdDocument          *self);
/* Clears the marks, threshold and feather (one undoable edit). */
void             bd_document_reset              (BdDocument          *self);
/* Whether bd_document_reset would change anything: strokes, a threshold or a feather. */
gboolean         bd_document_get_can_reset      (BdDocument          *self);

/* 0 keeps the soft mask; otherwise the cut-off in (0, 1]. */
double           bd_document_get_threshold      (BdDocument          *self);
void             bd_document_set_threshold      (BdDocument          *self,
                                                 double               threshold);
/* Edge softness in photo pixels. */
double           bd_document_get_feather        (BdDocument          *self);
void             bd_document_set_feather        (BdDocument          *self,
                                                 double               feather);
/* A bd_background_kind. BD_BACKGROUND_IMAGE is refused until an image has been set (see
 * bd_document_set_background_file_async()). */
guint            bd_document_get_background_kind (BdDocument         *self);
void             bd_document_set_background_kind (BdDocument         *self,
                                                  guint               kind);
const GdkRGBA   *bd_document_get_background_color (BdDocument        *self);
void             bd_document_set_background_color (BdDocument        *self,
                                                   const GdkRGBA     *color);
/* Blur strength 0..100 (100 = a tenth of the photo's long side). */
double           bd_document_get_background_blur (BdDocument         *self);
void             bd_document_set_background_blur (BdDocument         *self,
                                                  double              blur);
const char      *bd_document_get_background_name (BdDocument         *self);
/* Loads @file and makes it the background image (and the background kind "image"). */
void             bd_document_set_background_file_async  (BdDocument          *self,
                                                         GFile               *file,
                                                         GCancellable        *cancellable,
                                                         GAsyncReadyCallback  callback,
                                                         gpointer             user_data);
gboolean         bd_document_set_background_file_finish (BdDocument          *self,
                                                         GAsyncResult        *result,
                                                         GError             **error);

/* The result at full size as it is now, straight alpha, for the clipboard. */
void             bd_document_render_async       (BdDocument          *self,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
GdkTexture      *bd_document_render_finish      (BdDocument          *self,
                                                 GAsyncResult        *result,
                                                 GError             **error);
/* Writes the result as it is now to @file (format from its extension). */
void             bd_document_save_async         (BdDocument          *self,
                                                 GFile               *file,
                                                 int                  jpeg_quality,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
gboolean         bd_document_save_finish        (BdDocument          *self,
                                                 GAsyncResult        *result,
                                                 GError             **error);
/* TRUE when there are edits since the photo was opened or last saved (undoing back to
 * the saved state counts as none). */
gboolean         bd_document_get_modified       (BdDocument          *self);
/* Where the last successful save went; NULL before one. */
GFile           *bd_document_get_saved_file     (BdDocument          *self);

/* What bd_document_save_async() writes for a photo opened with @mask and never edited,
 * without a document: the photo is read from @source in the worker (for the rows of the
 * batch that were never opened). */
void             bd_document_save_unedited_async  (GFile               *source,
                                                   GBytes              *mask,
                                                   GFile               *file,
                                                   int                  jpeg_quality,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
gboolean         bd_document_save_unedited_finish (GAsyncResult        *result,
                                                   GError             **error);

G_END_DECLS
