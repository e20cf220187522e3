/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of BdDocument share, as gnome-text-editor's editor-page-private.h does:
 *   bd-document.c          the object, its properties, the look's settings, getters
 *   bd-document-history.c  brush marks, edits and the undo history
 *   bd-document-worker.c   loading, the removal, compositing, background images
 *   bd-document-view.c     previews and crops for the canvas
 *   bd-document-save.c     rendering for the clipboard and files, saving, exporting */
#pragma once

#include "backdrop.h"
#include "bd-document.h"

G_BEGIN_DECLS

/* The properties, for bd_document_notify() from any of the files. */
typedef enum {
  PROP_0,
  PROP_ENGINE,
  PROP_STATE,
  PROP_PROGRESS,
  PROP_TITLE,
  PROP_FILE,
  PROP_WIDTH,
  PROP_HEIGHT,
  PROP_DEVICE_DESCRIPTION,
  PROP_SECONDS,
  PROP_ERROR_MESSAGE,
  PROP_ORIGINAL,
  PROP_RESULT,
  PROP_BUSY,
  PROP_CAN_UNDO,
  PROP_CAN_REDO,
  PROP_THRESHOLD,
  PROP_FEATHER,
  PROP_BACKGROUND_KIND,
  PROP_BACKGROUND_COLOR,
  PROP_BACKGROUND_BLUR,
  PROP_BACKGROUND_NAME,
  PROP_MODIFIED,
  PROP_PREVIEW,
  PROP_CROP,
  N_PROPS
} BdDocumentProp;


/* Everything about the result that the user sets, besides the brush marks. */
typedef struct
{
  double     threshold;
  double     feather;
  guint      background_kind;
  GdkRGBA    background_color;
  double     background_blur;
  GdkPixbuf *background_image;
  char      *background_name;
  guint      crop;         /* BdCrop: applied when saving, shown as a frame */
} Look;

/* One undoable step: the look before and after, and the marks in @area before and after
 * (area-sized copies; NULL stands for "no marks"). */
typedef struct
{
  Look         before;
  Look         after;
  GdkRectangle area;
  GBytes      *marks_before;
  GBytes      *marks_after;
  guint        merge_key;   /* a property id: later moves of the same slider join this edit */
  gint64       time;
  guint64      id;          /* what "saved" points at: see saved_edit */
} Edit;

struct _BdDocument
{
  GObject          parent_instance;

  BdEngine        *engine;

  BdDocumentState  state;
  double           progress;
  char            *title;
  GFile           *file;
  char            *device;
  double           seconds;
  char            *error_message;

  guint            generation;   /* bumped on every open; late results of older ones are dropped */
  GCancellable    *cancellable;  /* for loading and removal */
  GdkPixbuf       *photo;
  GdkTexture      *original;
  GdkTexture      *original_preview;
  GBytes          *preview_pixels;  /* original_preview's pixels, packed rows */
  int              preview_channels;
  GBytes          *mask;
  GBytes          *marks;        /* width x height BdMark values; NULL when none */
  Look             look;

  GQueue           undo;
  GQueue           redo;
  guint64          last_edit_id;
  guint64          saved_edit;   /* the id of the edit on top of the undo stack when last saved
                                  * (0: none, as opened); another top means unsaved changes */
  gboolean         modified;
  GFile           *saved_file;   /* where it was saved last, for Save without asking */

  guint64          serial;       /* counts edits */
  guint64          result_serial;
  GdkTexture      *result;
  GdkTexture      *result_preview;
  GBytes          *result_preview_bytes;  /* its pixels, packed premultiplied RGBA */
  guint64          preview_serial;        /* the edit result_preview shows */
  gboolean         patching;              /* a bd-document-patch.c job runs */
  GdkRectangle     patch_area;            /* edited since that job began; empty: none */
  guint64          look_serial;           /* the last edit of the look: no patch before
                                           * the preview has it */
  GBytes          *result_bytes;  /* premultiplied RGBA, full size: what views are cut from */
  gboolean         composing;
  gboolean         compose_again;

  /* The mask as edited, and the pictures that show it (made with each result while
   * mask_views is on): see BdLayer. */
  gboolean         mask_views;
  GBytes          *alpha;           /* full size; NULL while mask_views is off */
  GdkTexture      *mask_preview;
  GdkTexture      *overlay_preview;
  GdkTexture      *unsure_preview;
  double           unsure_fraction;

  /* The subject's box for the crop frame, of the marks of edit serial crop_box_serial - 1
   * (0: not known); crop_box_found is FALSE when nothing is kept. */
  guint64          crop_box_serial;
  gboolean         crop_box_found;
  GdkRectangle     crop_box;
};

/* A snapshot of what the result is made from, for a worker. */
typedef struct
{
  guint      generation;
  guint64    serial;
  guint64    edit_id;     /* the top of the undo stack when taken */
  GdkPixbuf *photo;
  GBytes    *mask;
  GBytes    *marks;
  Look       look;
  gboolean   premultiplied;
  gboolean   mask_views;  /* make the mask's pictures too (from these:) */
  GBytes    *preview_pixels;
  int        preview_width, preview_height, preview_channels;
} ComposeJob;


/* The alpha a pixel of mask value @alpha has under @mark. */
static inline guint8
bd_mark_decide (guint8 mark,
                guint8 alpha)
{
  if (mark == BD_MARK_KEEP)
    return 255;
  if (mark == BD_MARK_REMOVE)
    return 0;
  if (mark >= BD_MARK_SOFT)
    return (guint8) (((mark - BD_MARK_SOFT) * 255 + 126) / 252);
  return alpha;
}

/* The mark that decides @alpha: the edge-aware brush's. */
static inline guint8
bd_mark_from_alpha (guint8 alpha)
{
  return (guint8) (BD_MARK_SOFT + (alpha * 252 + 127) / 255);
}

void        bd_look_init_default   (Look          *look);
void        bd_look_copy           (Look          *dest,
                                    const Look    *src);
void        bd_look_clear          (Look          *look);
gboolean    bd_look_equal          (const Look    *a,
                                    const Look    *b);
/* The library's background for @look; @image_view receives the image's view. */
void        bd_look_to_background  (const Look    *look,
                                    GdkPixbuf     *photo,
                                    bd_background *background,
                                    bd_image      *image_view);

ComposeJob *bd_document_snapshot   (BdDocument    *self,
                                    gboolean       premultiplied);
void        bd_compose_job_free    (ComposeJob    *job);
/* The mask as the user edited it: marks, then threshold and feather. Any thread. */
guint8     *bd_compose_job_alpha   (ComposeJob    *job,
                                    GError       **error);
/* The result of @job, RGBA at full size. Any thread. */
GBytes     *bd_compose_job_run     (ComposeJob    *job,
                                    GError       **error);
GdkTexture *bd_texture_new         (GBytes        *bytes,
                                    int            width,
                                    int            height,
                                    int            channels,
                                    gboolean       premultiplied);
void        bd_document_notify     (BdDocument    *self,
                                    BdDocumentProp prop);

/* History (bd-document-history.c) */
void        bd_edit_free           (Edit          *edit);
/* The id of the edit on top of the undo stack; 0 when none. */
guint64     bd_document_top_edit   (BdDocument    *self);
/* Notifies can-undo, can-redo and modified. */
void        bd_document_notify_history (BdDocument *self);
void        bd_document_clear_history  (BdDocument *self);
/* Makes @look the current look, with notifications for what changed. */
void        bd_document_apply_look (BdDocument    *self,
                                    const Look    *look);
/* Records and applies a change of look; @merge_key as in Edit. */
void        bd_document_change_look (BdDocument   *self,
                                     const Look   *look,
                                     guint         merge_key);

/* Makes @marks (a whole plane, taken) the marks, as one undoable edit of @area, which holds
 * every change; returns the edit's serial. */
guint64     bd_document_commit_marks (BdDocument         *self,
                                      guint8             *marks,
                                      const GdkRectangle *area);

/* Starts redrawing the part of the result preview that @area (photo pixels) covers, ahead
 * of the whole result (bd-document-patch.c); does nothing where it cannot be exact. Call it
 * after bd_document_queue_compose() for an edit of marks; an edit of the look sets
 * look_serial instead. */
void        bd_document_patch_preview (BdDocument         *self,
                                       const GdkRectangle *area);

/* Work (bd-document-worker.c) */
/* Counts an edit and starts making its result. */
void        bd_document_queue_compose (BdDocument *self);

/* After a save of @job's state to @file succeeded: that state is the saved one. */
void        bd_document_mark_saved (BdDocument    *self,
                                    ComposeJob    *job,
                                    GFile         *file);

G_END_DECLS
