/* SPDX-License-Identifier: Apache-2.0 */
/* The document object: its properties, the look and its settings, and the getters. Edits
 * and history live in bd-document-history.c, loading, removal and compositing in
 * bd-document-worker.c, views in bd-document-view.c, saving in bd-document-save.c. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "backdrop.h"
#include "bd-crop.h"
#include "bd-document-private.h"
#include "bd-image-io.h"
#include "bd-pixels.h"

G_DEFINE_FINAL_TYPE (BdDocument, bd_document, G_TYPE_OBJECT)

G_DEFINE_ENUM_TYPE (BdDocumentState, bd_document_state,
                    G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_EMPTY, "empty"),
                    G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_LOADING, "loading"),
                    G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_SEGMENTING, "segmenting"),
                    G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_READY, "ready"),
                    G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_STOPPED, "stopped"),
                    G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_FAILED, "failed"))

static GParamSpec *properties[N_PROPS];

void
bd_document_notify (BdDocument     *self,
                    BdDocumentProp  prop)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

static const GdkRGBA default_background_color = { 1.0f, 1.0f, 1.0f, 1.0f };


/* Looks */

void
bd_look_init_default (Look *look)
{
  memset (look, 0, sizeof *look);
  look->background_kind = BD_BACKGROUND_TRANSPARENT;
  look->background_color = default_background_color;
  look->background_blur = 30;
}

void
bd_look_copy (Look       *dest,
              const Look *src)
{
  *dest = *src;
  if (dest->background_image != NULL)
    g_object_ref (dest->background_image);
  dest->background_name = g_strdup (src->background_name);
}

void
bd_look_clear (Look *look)
{
  g_clear_object (&look->background_image);
  g_clear_pointer (&look->background_name, g_free);
}

gboolean
bd_look_equal (const Look *a,
               const Look *b)
{
  return a->threshold == b->threshold &&
         a->feather == b->feather &&
         a->background_kind == b->background_kind &&
         gdk_rgba_equal (&a->background_color, &b->background_color) &&
         a->background_blur == b->background_blur &&
         a->background_image == b->background_image &&
         a->crop == b->crop;
}

/* The library's background for @look; @image_view receives the image's view. */
void
bd_look_to_background (const Look    *look,
                       GdkPixbuf     *photo,
                       bd_background *background,
                       bd_image      *image_view)
{
  int long_side = MAX (gdk_pixbuf_get_width (photo), gdk_pixbuf_get_height (photo));

  memset (background, 0, sizeof *background);
  background->kind = look->background_kind;

  switch (look->background_kind)
    {
    case BD_BACKGROUND_COLOR:
      background->color[0] = CLAMP (look->background_color.red, 0.f, 1.f) * 255.f + .5f;
      background->color[1] = CLAMP (look->background_color.green, 0.f, 1.f) * 255.f + .5f;
      background->color[2] = CLAMP (look->background_color.blue, 0.f, 1.f) * 255.f + .5f;
      background->color[3] = CLAMP (look->background_color.alpha, 0.f, 1.f) * 255.f + .5f;
      break;

    case BD_BACKGROUND_BLUR:
      background->blur_radius = look->background_blur / 1000.0 * long_side;
      break;

    case BD_BACKGROUND_IMAGE:
      /* An image the fill chooser loaded (8-bit RGB or RGBA), so the view cannot fail. */
      if (look->background_image != NULL && bd_pixbuf_view (look->background_image, image_view, NULL))
        background->image = image_view;
      else
        background->kind = BD_BACKGROUND_TRANSPARENT;
      break;

    default:
      background->kind = BD_BACKGROUND_TRANSPARENT;
      break;
    }
}

/* Settings of the look */

#define CHANGE_LOOK(self, field, value, prop)          \
  G_STMT_START {                                        \
    Look look_;                                         \
    bd_look_copy (&look_, &(self)->look);                  \
    look_.field = (value);                              \
    bd_document_change_look ((self), &look_, (prop));   \
    bd_look_clear (&look_);                                \
  } G_STMT_END

double
bd_document_get_threshold (BdDocument *self)
{
  return self->look.threshold;
}

void
bd_document_set_threshold (BdDocument *self,
                           double      threshold)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, threshold, CLAMP (threshold, 0.0, 1.0), PROP_THRESHOLD);
}

double
bd_document_get_feather (BdDocument *self)
{
  return self->look.feather;
}

void
bd_document_set_feather (BdDocument *self,
                         double      feather)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, feather, CLAMP (feather, 0.0, 500.0), PROP_FEATHER);
}

guint
bd_document_get_background_kind (BdDocument *self)
{
  return self->look.background_kind;
}

void
bd_document_set_background_kind (BdDocument *self,
                                 guint       kind)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));
  g_return_if_fail (kind <= BD_BACKGROUND_IMAGE);

  /* An image fill without an image would show transparency that says nothing: it starts
   * with bd_document_set_background_file_async(), as one edit. */
  if (kind == BD_BACKGROUND_IMAGE && self->look.background_image == NULL)
    return;

  CHANGE_LOOK (self, background_kind, kind, 0);
}

const GdkRGBA *
bd_document_get_background_color (BdDocument *self)
{
  return &self->look.background_color;
}

void
bd_document_set_background_color (BdDocument    *self,
                                  const GdkRGBA *color)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, background_color, color ? *color : default_background_color,
               PROP_BACKGROUND_COLOR);
}

double
bd_document_get_background_blur (BdDocument *self)
{
  return self->look.background_blur;
}

void
bd_document_set_background_blur (BdDocument *self,
                                 double      blur)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, background_blur, CLAMP (blur, 0.0, 100.0), PROP_BACKGROUND_BLUR);
}

guint
bd_document_get_crop (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), BD_CROP_NONE);
  return self->look.crop;
}

void
bd_document_set_crop (BdDocument *self,
                      guint       crop)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, crop, MIN (crop, BD_CROP_LAST), PROP_CROP);
}

gboolean
bd_document_get_crop_frame (BdDocument   *self,
                            GdkRectangle *frame)
{
  int width, height, out_width, out_height;

  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);

  if (self->look.crop == BD_CROP_NONE || self->mask == NULL || self->photo == NULL)
    return FALSE;

  width = gdk_pixbuf_get_width (self->photo);
  height = gdk_pixbuf_get_height (self->photo);
  if (self->crop_box_serial != self->serial + 1)
    {
      const guint8 *mask = g_bytes_get_data (self->mask, NULL);
      g_autofree guint8 *alpha = NULL;

      /* The mask as the marks decide it (threshold and feather move the edge by a pixel or
       * two: not worth a pass of their own); once an edit. */
      if (self->marks != NULL)
        {
          const guint8 *marks = g_bytes_get_data (self->marks, NULL);
          gsize size = (gsize) width * height;

          alpha = g_malloc (size);
          for (gsize i = 0; i < size; i++)
            alpha[i] = bd_mark_decide (marks[i], mask[i]);
        }
      self->crop_box_found = bd_crop_subject_box (alpha ? alpha : mask, width, height, width, 1,
                                                  &self->crop_box);
      self->crop_box_serial = self->serial + 1;
    }

  if (!self->crop_box_found)
    return FALSE;
  bd_crop_frame (self->look.crop, &self->crop_box, width, height, frame, &out_width, &out_height);
  return TRUE;
}

const char *
bd_document_get_background_name (BdDocument *self)
{
  return self->look.background_name;
}

/* Getters */

BdDocumentState
bd_document_get_state (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), BD_DOCUMENT_STATE_EMPTY);
  return self->state;
}

double
bd_document_get_progress (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->progress;
}

const char *
bd_document_get_title (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->title;
}

GFile *
bd_document_get_file (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->file;
}

int
bd_document_get_width (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->photo ? gdk_pixbuf_get_width (self->photo) : 0;
}

int
bd_document_get_height (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->photo ? gdk_pixbuf_get_height (self->photo) : 0;
}

const char *
bd_document_get_device_description (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->device;
}

double
bd_document_get_seconds (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->seconds;
}

const char *
bd_document_get_error_message (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->error_message;
}

GdkTexture *
bd_document_get_original (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->original;
}

GdkTexture *
bd_document_get_result (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->result;
}

guint64
bd_document_get_result_serial (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->result_serial;
}

guint64
bd_document_get_preview_serial (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return MAX (self->result_serial, self->preview_serial);
}

gboolean
bd_document_get_busy (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);
  return self->composing;
}

GBytes *
bd_document_get_mask (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->mask;
}

gboolean
bd_document_get_modified (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);
  return self->modified;
}

GFile *
bd_document_get_saved_file (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->saved_file;
}

/* GObject */

BdDocument *
bd_document_new (BdEngine *engine)
{
  g_return_val_if_fail (BD_IS_ENGINE (engine), NULL);

  return g_object_new (BD_TYPE_DOCUMENT, "engine", engine, NULL);
}

static void
bd_document_dispose (GObject *object)
{
  BdDocument *self = BD_DOCUMENT (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);

  G_OBJECT_CLASS (bd_document_parent_class)->dispose (object);
}

static void
bd_document_finalize (GObject *object)
{
  BdDocument *self = BD_DOCUMENT (object);

  g_queue_clear_full (&self->undo, (GDestroyNotify) bd_edit_free);
  g_queue_clear_full (&self->redo, (GDestroyNotify) bd_edit_free);
  bd_look_clear (&self->look);
  g_clear_object (&self->engine);
  g_clear_object (&self->file);
  g_clear_object (&self->saved_file);
  g_clear_object (&self->photo);
  g_clear_object (&self->original);
  g_clear_object (&self->original_preview);
  g_clear_object (&self->result);
  g_clear_object (&self->result_preview);
  g_clear_pointer (&self->result_preview_bytes, g_bytes_unref);
  g_clear_pointer (&self->result_bytes, g_bytes_unref);
  g_clear_pointer (&self->preview_pixels, g_bytes_unref);
  g_clear_pointer (&self->alpha, g_bytes_unref);
  g_clear_object (&self->mask_preview);
  g_clear_object (&self->overlay_preview);
  g_clear_object (&self->unsure_preview);
  g_clear_pointer (&self->mask, g_bytes_unref);
  g_clear_pointer (&self->marks, g_bytes_unref);
  g_free (self->title);
  g_free (self->device);
  g_free (self->error_message);

  G_OBJECT_CLASS (bd_document_parent_class)->finalize (object);
}

static void
bd_document_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  BdDocument *self = BD_DOCUMENT (object);

  switch (prop_id)
    {
    case PROP_ENGINE:
      g_value_set_object (value, self->engine);
      break;

    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;

    case PROP_PROGRESS:
      g_value_set_double (value, self->progress);
      break;

    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;

    case PROP_FILE:
      g_value_set_object (value, self->file);
      break;

    case PROP_WIDTH:
      g_value_set_int (value, bd_document_get_width (self));
      break;

    case PROP_HEIGHT:
      g_value_set_int (value, bd_document_get_height (self));
      break;

    case PROP_DEVICE_DESCRIPTION:
      g_value_set_string (value, self->device);
      break;

    case PROP_SECONDS:
      g_value_set_double (value, self->seconds);
      break;

    case PROP_ERROR_MESSAGE:
      g_value_set_string (value, self->error_message);
      break;

    case PROP_ORIGINAL:
      g_value_set_object (value, self->original);
      break;

    case PROP_RESULT:
      g_value_set_object (value, self->result);
      break;

    case PROP_BUSY:
      g_value_set_boolean (value, self->composing);
      break;

    case PROP_CAN_UNDO:
      g_value_set_boolean (value, bd_document_get_can_undo (self));
      break;

    case PROP_CAN_REDO:
      g_value_set_boolean (value, bd_document_get_can_redo (self));
      break;

    case PROP_THRESHOLD:
      g_value_set_double (value, self->look.threshold);
      break;

    case PROP_FEATHER:
      g_value_set_double (value, self->look.feather);
      break;

    case PROP_BACKGROUND_KIND:
      g_value_set_uint (value, self->look.background_kind);
      break;

    case PROP_BACKGROUND_COLOR:
      g_value_set_boxed (value, &self->look.background_color);
      break;

    case PROP_BACKGROUND_BLUR:
      g_value_set_double (value, self->look.background_blur);
      break;

    case PROP_CROP:
      g_value_set_uint (value, self->look.crop);
      break;

    case PROP_BACKGROUND_NAME:
      g_value_set_string (value, self->look.background_name);
      break;

    case PROP_PREVIEW:
      g_value_set_object (value, self->result_preview);
      break;

    case PROP_MODIFIED:
      g_value_set_boolean (value, self->modified);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_document_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  BdDocument *self = BD_DOCUMENT (object);

  switch (prop_id)
    {
    case PROP_ENGINE:
      self->engine = g_value_dup_object (value);
      break;

    case PROP_THRESHOLD:
      bd_document_set_threshold (self, g_value_get_double (value));
      break;

    case PROP_FEATHER:
      bd_document_set_feather (self, g_value_get_double (value));
      break;

    case PROP_BACKGROUND_KIND:
      bd_document_set_background_kind (self, g_value_get_uint (value));
      break;

    case PROP_BACKGROUND_COLOR:
      bd_document_set_background_color (self, g_value_get_boxed (value));
      break;

    case PROP_BACKGROUND_BLUR:
      bd_document_set_background_blur (self, g_value_get_double (value));
      break;

    case PROP_CROP:
      bd_document_set_crop (self, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_document_class_init (BdDocumentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = bd_document_dispose;
  object_class->finalize = bd_document_finalize;
  object_class->get_property = bd_document_get_property;
  object_class->set_property = bd_document_set_property;

  properties[PROP_ENGINE] =
    g_param_spec_object ("engine", NULL, NULL, BD_TYPE_ENGINE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL, BD_TYPE_DOCUMENT_STATE, BD_DOCUMENT_STATE_EMPTY, ro);
  properties[PROP_PROGRESS] = g_param_spec_double ("progress", NULL, NULL, 0, 1, 0, ro);
  properties[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL, ro);
  properties[PROP_FILE] = g_param_spec_object ("file", NULL, NULL, G_TYPE_FILE, ro);
  properties[PROP_WIDTH] = g_param_spec_int ("width", NULL, NULL, 0, G_MAXINT, 0, ro);
  properties[PROP_HEIGHT] = g_param_spec_int ("height", NULL, NULL, 0, G_MAXINT, 0, ro);
  properties[PROP_DEVICE_DESCRIPTION] =
    g_param_spec_string ("device-description", NULL, NULL, NULL, ro);
  properties[PROP_SECONDS] = g_param_spec_double ("seconds", NULL, NULL, 0, G_MAXDOUBLE, 0, ro);
  properties[PROP_ERROR_MESSAGE] = g_param_spec_string ("error-message", NULL, NULL, NULL, ro);
  properties[PROP_ORIGINAL] = g_param_spec_object ("original", NULL, NULL, GDK_TYPE_TEXTURE, ro);
  properties[PROP_RESULT] = g_param_spec_object ("result", NULL, NULL, GDK_TYPE_TEXTURE, ro);
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE, ro);
  properties[PROP_CAN_UNDO] = g_param_spec_boolean ("can-undo", NULL, NULL, FALSE, ro);
  properties[PROP_CAN_REDO] = g_param_spec_boolean ("can-redo", NULL, NULL, FALSE, ro);
  properties[PROP_THRESHOLD] = g_param_spec_double ("threshold", NULL, NULL, 0, 1, 0, rw);
  properties[PROP_FEATHER] = g_param_spec_double ("feather", NULL, NULL, 0, 500, 0, rw);
  properties[PROP_BACKGROUND_KIND] =
    g_param_spec_uint ("background-kind", NULL, NULL, 0, BD_BACKGROUND_IMAGE, 0, rw);
  properties[PROP_BACKGROUND_COLOR] =
    g_param_spec_boxed ("background-color", NULL, NULL, GDK_TYPE_RGBA, rw);
  properties[PROP_BACKGROUND_BLUR] =
    g_param_spec_double ("background-blur", NULL, NULL, 0, 100, 30, rw);
  properties[PROP_CROP] = g_param_spec_uint ("crop", NULL, NULL, 0, BD_CROP_LAST, 0, rw);
  properties[PROP_BACKGROUND_NAME] = g_param_spec_string ("background-name", NULL, NULL, NULL, ro);
  properties[PROP_MODIFIED] = g_param_spec_boolean ("modified", NULL, NULL, FALSE, ro);
  /* The result's preview, patched ahead of the whole result after an edit of a part. */
  properties[PROP_PREVIEW] = g_param_spec_object ("preview", NULL, NULL, GDK_TYPE_TEXTURE, ro);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
bd_document_init (BdDocument *self)
{
  g_queue_init (&self->undo);
  g_queue_init (&self->redo);
  bd_look_init_default (&self->look);
}

