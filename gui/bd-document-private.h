/* SPDX-License-Identifier: Apache-2.0 */
/* What bd-document.c (the object: loading, removal, edits, history) shares with
 * bd-document-save.c (rendering for the clipboard and files, saving, exporting). */
#pragma once

#include "backdrop.h"
#include "bd-document.h"

G_BEGIN_DECLS

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
  GBytes          *result_bytes;  /* premultiplied RGBA, full size: what views are cut from */
  gboolean         composing;
  gboolean         compose_again;
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
} ComposeJob;


void        bd_look_init_default   (Look          *look);
void        bd_look_copy           (Look          *dest,
                                    const Look    *src);
void        bd_look_clear          (Look          *look);
/* The library's background for @look; @image_view receives the image's view. */
void        bd_look_to_background  (const Look    *look,
                                    GdkPixbuf     *photo,
                                    bd_background *background,
                                    bd_image      *image_view);

ComposeJob *bd_document_snapshot   (BdDocument    *self,
                                    gboolean       premultiplied);
void        bd_compose_job_free    (ComposeJob    *job);
/* The result of @job, RGBA at full size. Any thread. */
GBytes     *bd_compose_job_run     (ComposeJob    *job,
                                    GError       **error);
GdkTexture *bd_texture_new         (GBytes        *bytes,
                                    int            width,
                                    int            height,
                                    int            channels,
                                    gboolean       premultiplied);
/* After a save of @job's state to @file succeeded: that state is the saved one. */
void        bd_document_mark_saved (BdDocument    *self,
                                    ComposeJob    *job,
                                    GFile         *file);

G_END_DECLS
