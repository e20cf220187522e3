/* SPDX-License-Identifier: Apache-2.0 */
/* The document's edits: brush marks, looks, and the undo history that records both. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "bd-document-private.h"
#include "bd-edge-brush.h"

#define MAX_UNDO      64
#define MERGE_USEC    (1200 * 1000)  /* slider moves closer together than this are one edit */

/* Marks */

static GBytes *
marks_copy_area (GBytes             *marks,
                 int                 width,
                 const GdkRectangle *area)
{
  const guint8 *src;
  guint8 *dest;

  if (marks == NULL)
    return NULL;

  src = g_bytes_get_data (marks, NULL);
  dest = g_malloc ((gsize) area->width * area->height);
  for (int y = 0; y < area->height; y++)
    memcpy (dest + (gsize) y * area->width,
            src + (gsize) (area->y + y) * width + area->x,
            area->width);

  return g_bytes_new_take (dest, (gsize) area->width * area->height);
}

/* A copy of @marks (or of none) with @area replaced by @area_marks (or cleared). */
static guint8 *
marks_dup_with_area (GBytes             *marks,
                     int                 width,
                     int                 height,
                     const GdkRectangle *area,
                     GBytes             *area_marks)
{
  gsize size = (gsize) width * height;
  guint8 *dest = marks ? g_memdup2 (g_bytes_get_data (marks, NULL), size) : g_malloc0 (size);
  const guint8 *src = area_marks ? g_bytes_get_data (area_marks, NULL) : NULL;

  for (int y = 0; y < area->height; y++)
    {
      guint8 *row = dest + (gsize) (area->y + y) * width + area->x;

      if (src != NULL)
        memcpy (row, src + (gsize) y * area->width, area->width);
      else
        memset (row, BD_MARK_NONE, area->width);
    }

  return dest;
}

/* Edits */

void
bd_edit_free (Edit *edit)
{
  bd_look_clear (&edit->before);
  bd_look_clear (&edit->after);
  g_clear_pointer (&edit->marks_before, g_bytes_unref);
  g_clear_pointer (&edit->marks_after, g_bytes_unref);
  g_free (edit);
}

guint64
bd_document_top_edit (BdDocument *self)
{
  Edit *top = g_queue_peek_head (&self->undo);

  return top != NULL ? top->id : 0;
}

void
bd_document_notify_history (BdDocument *self)
{
  /* Edits stay edits while the removal runs again (the mask is there meanwhile). */
  gboolean modified = (self->state == BD_DOCUMENT_STATE_READY || self->mask != NULL) &&
                      bd_document_top_edit (self) != self->saved_edit;

  bd_document_notify (self, PROP_CAN_UNDO);
  bd_document_notify (self, PROP_CAN_REDO);
  if (modified != self->modified)
    {
      self->modified = modified;
      bd_document_notify (self, PROP_MODIFIED);
    }
}

void
bd_document_mark_saved (BdDocument *self,
                        ComposeJob *job,
                        GFile      *file)
{
  if (job->generation != self->generation)
    return;

  self->saved_edit = job->edit_id;
  g_set_object (&self->saved_file, file);
  bd_document_notify_history (self);
}

void
bd_document_clear_history (BdDocument *self)
{
  g_queue_clear_full (&self->undo, (GDestroyNotify) bd_edit_free);
  g_queue_clear_full (&self->redo, (GDestroyNotify) bd_edit_free);
  bd_document_notify_history (self);
}

static void
bd_document_push_edit (BdDocument *self,
                       Edit       *edit)
{
  edit->id = ++self->last_edit_id;
  g_queue_push_head (&self->undo, edit);
  while (g_queue_get_length (&self->undo) > MAX_UNDO)
    bd_edit_free (g_queue_pop_tail (&self->undo));
  g_queue_clear_full (&self->redo, (GDestroyNotify) bd_edit_free);
  bd_document_notify_history (self);
}

/* Makes @look the current look, with notifications for what changed. */
void
bd_document_apply_look (BdDocument *self,
                        const Look *look)
{
  Look old = self->look;
  GObject *object = G_OBJECT (self);

  bd_look_copy (&self->look, look);

  g_object_freeze_notify (object);
  if (old.threshold != look->threshold)
    bd_document_notify (self, PROP_THRESHOLD);
  if (old.feather != look->feather)
    bd_document_notify (self, PROP_FEATHER);
  if (old.background_kind != look->background_kind)
    bd_document_notify (self, PROP_BACKGROUND_KIND);
  if (!gdk_rgba_equal (&old.background_color, &look->background_color))
    bd_document_notify (self, PROP_BACKGROUND_COLOR);
  if (old.background_blur != look->background_blur)
    bd_document_notify (self, PROP_BACKGROUND_BLUR);
  if (old.crop != look->crop)
    bd_document_notify (self, PROP_CROP);
  if (g_strcmp0 (old.background_name, look->background_name) != 0)
    bd_document_notify (self, PROP_BACKGROUND_NAME);
  g_object_thaw_notify (object);

  bd_look_clear (&old);
}

/* Records and applies a change of look; moves of one slider in quick succession merge. */
void
bd_document_change_look (BdDocument *self,
                         const Look *look,
                         guint       merge_key)
{
  Edit *top = g_queue_peek_head (&self->undo);
  gint64 now = g_get_monotonic_time ();

  if (bd_look_equal (look, &self->look))
    return;

  /* The saved state is not merged into: undoing back to it must stay possible. */
  if (top != NULL && merge_key != 0 && top->merge_key == merge_key && top->id != self->saved_edit &&
      g_queue_is_empty (&self->redo) && now - top->time < MERGE_USEC)
    {
      bd_look_clear (&top->after);
      bd_look_copy (&top->after, look);
      top->time = now;
    }
  else
    {
      Edit *edit = g_new0 (Edit, 1);

      bd_look_copy (&edit->before, &self->look);
      bd_look_copy (&edit->after, look);
      edit->merge_key = merge_key;
      edit->time = now;
      bd_document_push_edit (self, edit);
    }

  bd_document_apply_look (self, look);
  bd_document_queue_compose (self);
  self->look_serial = self->serial;
}

/* Applies one side of @edit: its look, and its marks in its area. */
static void
bd_document_apply_edit (BdDocument *self,
                        Edit       *edit,
                        gboolean    forward)
{
  if (edit->area.width > 0 && edit->area.height > 0)
    {
      int width = gdk_pixbuf_get_width (self->photo);
      int height = gdk_pixbuf_get_height (self->photo);
      guint8 *marks = marks_dup_with_area (self->marks, width, height, &edit->area,
                                           forward ? edit->marks_after : edit->marks_before);

      g_clear_pointer (&self->marks, g_bytes_unref);
      self->marks = g_bytes_new_take (marks, (gsize) width * height);
    }

  bd_document_apply_look (self, forward ? &edit->after : &edit->before);
  bd_document_queue_compose (self);
  if (bd_look_equal (&edit->before, &edit->after))
    bd_document_patch_preview (self, &edit->area);
  else
    self->look_serial = self->serial;
}

guint64
bd_document_commit_marks (BdDocument         *self,
                          guint8             *marks,
                          const GdkRectangle *area)
{
  int width = gdk_pixbuf_get_width (self->photo);
  int height = gdk_pixbuf_get_height (self->photo);
  Edit *edit = g_new0 (Edit, 1);

  bd_look_copy (&edit->before, &self->look);
  bd_look_copy (&edit->after, &self->look);
  edit->area = *area;
  edit->time = g_get_monotonic_time ();
  edit->marks_before = marks_copy_area (self->marks, width, area);

  g_clear_pointer (&self->marks, g_bytes_unref);
  self->marks = g_bytes_new_take (marks, (gsize) width * height);
  edit->marks_after = marks_copy_area (self->marks, width, area);

  bd_document_push_edit (self, edit);
  bd_document_queue_compose (self);
  bd_document_patch_preview (self, area);

  return self->serial;
}

/* Brush strokes */

static double
distance2_to_segment (double                  x,
                      double                  y,
                      const graphene_point_t *a,
                      const graphene_point_t *b)
{
  double dx = b->x - a->x, dy = b->y - a->y;
  double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((x - a->x) * dx + (y - a->y) * dy) / len2 : 0;
  double px, py;

  t = CLAMP (t, 0.0, 1.0);
  px = a->x + t * dx - x;
  py = a->y + t * dy - y;
  return px * px + py * py;
}

guint64
bd_document_paint_stroke (BdDocument             *self,
                          BdMark                  mark,
                          double                  radius,
                          const graphene_point_t *points,
                          guint                   n_points)
{
  return bd_document_paint_stroke_edge (self, mark, radius, points, n_points, 1.0);
}

guint64
bd_document_paint_stroke_edge (BdDocument             *self,
                               BdMark                  mark,
                               double                  radius,
                               const graphene_point_t *points,
                               guint                   n_points,
                               double                  hardness)
{
  int width, height;
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  GdkRectangle area;
  g_autofree guint8 *under = NULL;
  g_autofree guint8 *soft = NULL;
  guint8 *marks;

  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  g_return_val_if_fail (mark == BD_MARK_KEEP || mark == BD_MARK_REMOVE, 0);

  if (self->state != BD_DOCUMENT_STATE_READY || n_points == 0 || !(radius > 0))
    return 0;

  width = gdk_pixbuf_get_width (self->photo);
  height = gdk_pixbuf_get_height (self->photo);
  hardness = CLAMP (hardness, 0.0, 1.0);

  for (guint i = 0; i < n_points; i++)
    {
      x0 = MIN (x0, points[i].x);
      y0 = MIN (y0, points[i].y);
      x1 = MAX (x1, points[i].x);
      y1 = MAX (y1, points[i].y);
    }

  area.x = CLAMP ((int) floor (x0 - radius), 0, width);
  area.y = CLAMP ((int) floor (y0 - radius), 0, height);
  area.width = CLAMP ((int) ceil (x1 + radius), 0, width) - area.x;
  area.height = CLAMP ((int) ceil (y1 + radius), 0, height) - area.y;
  if (area.width <= 0 || area.height <= 0)
    return 0;

  /* Every pixel whose centre lies within @radius of the stroke's polyline. */
  under = g_malloc0 ((gsize) area.width * area.height);
  for (guint i = 0; i < MAX (n_points, 2) - 1; i++)
    {
      const graphene_point_t *a = &points[i];
      const graphene_point_t *b = &points[MIN (i + 1, n_points - 1)];
      int sx0 = CLAMP ((int) floor (MIN (a->x, b->x) - radius), area.x, area.x + area.width);
      int sy0 = CLAMP ((int) floor (MIN (a->y, b->y) - radius), area.y, area.y + area.height);
      int sx1 = CLAMP ((int) ceil (MAX (a->x, b->x) + radius), area.x, area.x + area.width);
      int sy1 = CLAMP ((int) ceil (MAX (a->y, b->y) + radius), area.y, area.y + area.height);

      for (int y = sy0; y < sy1; y++)
        {
          guint8 *row = under + (gsize) (y - area.y) * area.width - area.x;

          for (int x = sx0; x < sx1; x++)
            if (distance2_to_segment (x + 0.5, y + 0.5, a, b) <= radius * radius)
              row[x] = 1;
        }
    }

  /* Edge-aware: the alpha under the stroke solved from the photo and the sure pixels
   * around it, before the marks change. */
  if (hardness < 1.0)
    {
      BdEdgeBrush brush = {
        .photo = gdk_pixbuf_read_pixels (self->photo),
        .stride = gdk_pixbuf_get_rowstride (self->photo),
        .channels = gdk_pixbuf_get_n_channels (self->photo),
        .width = width,
        .height = height,
        .mask = g_bytes_get_data (self->mask, NULL),
        .marks = self->marks ? g_bytes_get_data (self->marks, NULL) : NULL,
        .under = under,
        .area_x = area.x,
        .area_y = area.y,
        .area_width = area.width,
        .area_height = area.height,
        .radius = radius,
        .keep = mark == BD_MARK_KEEP,
        .hardness = hardness,
      };

      soft = g_try_malloc ((gsize) area.width * area.height);
      if (soft == NULL || !bd_edge_brush_solve (&brush, soft))
        g_clear_pointer (&soft, g_free);  /* out of memory: the plain brush */
    }

  marks = self->marks ? g_memdup2 (g_bytes_get_data (self->marks, NULL), (gsize) width * height)
                      : g_malloc0 ((gsize) width * height);
  for (int y = 0; y < area.height; y++)
    {
      const guint8 *u = under + (gsize) y * area.width;
      guint8 *row = marks + (gsize) (area.y + y) * width + area.x;

      for (int x = 0; x < area.width; x++)
        if (u[x])
          row[x] = soft ? bd_mark_from_alpha (soft[(gsize) y * area.width + x]) : mark;
    }

  return bd_document_commit_marks (self, marks, &area);
}

gboolean
bd_document_get_can_undo (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);

  return self->state == BD_DOCUMENT_STATE_READY && !g_queue_is_empty (&self->undo);
}

gboolean
bd_document_get_can_redo (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);

  return self->state == BD_DOCUMENT_STATE_READY && !g_queue_is_empty (&self->redo);
}

void
bd_document_undo (BdDocument *self)
{
  Edit *edit;

  g_return_if_fail (BD_IS_DOCUMENT (self));

  if (!bd_document_get_can_undo (self))
    return;

  edit = g_queue_pop_head (&self->undo);
  edit->merge_key = 0;
  bd_document_apply_edit (self, edit, FALSE);
  g_queue_push_head (&self->redo, edit);
  bd_document_notify_history (self);
}

void
bd_document_redo (BdDocument *self)
{
  Edit *edit;

  g_return_if_fail (BD_IS_DOCUMENT (self));

  if (!bd_document_get_can_redo (self))
    return;

  edit = g_queue_pop_head (&self->redo);
  bd_document_apply_edit (self, edit, TRUE);
  g_queue_push_head (&self->undo, edit);
  bd_document_notify_history (self);
}

void
bd_document_reset (BdDocument *self)
{
  Edit *edit;
  int width, height;

  g_return_if_fail (BD_IS_DOCUMENT (self));

  if (!bd_document_get_can_reset (self))
    return;

  width = gdk_pixbuf_get_width (self->photo);
  height = gdk_pixbuf_get_height (self->photo);

  edit = g_new0 (Edit, 1);
  bd_look_copy (&edit->before, &self->look);
  bd_look_copy (&edit->after, &self->look);
  edit->after.threshold = 0;
  edit->after.feather = 0;
  edit->area = (GdkRectangle) { 0, 0, width, height };
  edit->marks_before = self->marks ? g_bytes_ref (self->marks) : NULL;
  edit->marks_after = NULL;
  edit->time = g_get_monotonic_time ();

  bd_document_push_edit (self, edit);
  bd_document_apply_edit (self, edit, TRUE);
}

gboolean
bd_document_get_can_reset (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);

  if (self->state != BD_DOCUMENT_STATE_READY)
    return FALSE;
  if (self->look.threshold != 0 || self->look.feather != 0)
    return TRUE;
  if (self->marks == NULL)
    return FALSE;

  /* Undone strokes leave a mark plane of zeros: look for one that is not (about a
   * millisecond for 12 MP, once an edit). */
  gsize size;
  const guint8 *m = g_bytes_get_data (self->marks, &size);
  for (gsize i = 0; i < size; i++)
    if (m[i] != 0)
      return TRUE;
  return FALSE;
}

