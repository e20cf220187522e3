/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include "bd-batch-item.h"

struct _BdBatchItem
{
  GObject           parent_instance;

  GFile            *file;
  char             *title;
  BdBatchItemState  state;
  double            progress;
  char             *message;
  GBytes           *mask;
  GdkTexture       *thumbnail;
  char             *device;
  double            seconds;
  BdDocument       *document;  /* only while opened in the editor, or edited */
};

G_DEFINE_FINAL_TYPE (BdBatchItem, bd_batch_item, G_TYPE_OBJECT)

G_DEFINE_ENUM_TYPE (BdBatchItemState, bd_batch_item_state,
  G_DEFINE_ENUM_VALUE (BD_BATCH_ITEM_WAITING, "waiting"),
  G_DEFINE_ENUM_VALUE (BD_BATCH_ITEM_WORKING, "working"),
  G_DEFINE_ENUM_VALUE (BD_BATCH_ITEM_DONE, "done"),
  G_DEFINE_ENUM_VALUE (BD_BATCH_ITEM_FAILED, "failed"),
  G_DEFINE_ENUM_VALUE (BD_BATCH_ITEM_EXPORTED, "exported"),
  G_DEFINE_ENUM_VALUE (BD_BATCH_ITEM_EXPORT_FAILED, "export-failed"))

enum {
  PROP_0,
  PROP_STATE,
  PROP_PROGRESS,
  PROP_MESSAGE,
  PROP_THUMBNAIL,
  PROP_MODIFIED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

BdBatchItem *
bd_batch_item_new (GFile *file)
{
  BdBatchItem *self;

  g_return_val_if_fail (G_IS_FILE (file), NULL);

  self = g_object_new (BD_TYPE_BATCH_ITEM, NULL);
  self->file = g_object_ref (file);
  self->title = g_file_get_basename (file);
  return self;
}

GFile *
bd_batch_item_get_file (BdBatchItem *self)
{
  return self->file;
}

const char *
bd_batch_item_get_title (BdBatchItem *self)
{
  return self->title;
}

BdBatchItemState
bd_batch_item_get_state (BdBatchItem *self)
{
  return self->state;
}

double
bd_batch_item_get_progress (BdBatchItem *self)
{
  return self->progress;
}

const char *
bd_batch_item_get_message (BdBatchItem *self)
{
  return self->message;
}

GBytes *
bd_batch_item_get_mask (BdBatchItem *self)
{
  return self->mask;
}

const char *
bd_batch_item_get_device (BdBatchItem *self)
{
  return self->device;
}

double
bd_batch_item_get_seconds (BdBatchItem *self)
{
  return self->seconds;
}

GdkTexture *
bd_batch_item_get_thumbnail (BdBatchItem *self)
{
  return self->thumbnail;
}

gboolean
bd_batch_item_has_mask (BdBatchItem *self)
{
  return self->mask != NULL;
}

static void
on_document_modified (BdBatchItem *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODIFIED]);
}

/* Memory: a document holds the photo at full size several times over (pixels, textures,
 * the result), so rows get one only when the user opens them, and give it up when left
 * with nothing to undo or redo. Rows never edited export through
 * bd_document_save_unedited_async(), which reads the photo only while it writes. */
BdDocument *
bd_batch_item_open_document (BdBatchItem *self,
                             BdEngine    *engine)
{
  g_return_val_if_fail (BD_IS_BATCH_ITEM (self), NULL);
  g_return_val_if_fail (self->mask != NULL, NULL);

  if (self->document == NULL)
    {
      self->document = bd_document_new (engine);
      g_signal_connect_object (self->document, "notify::modified",
                               G_CALLBACK (on_document_modified), self, G_CONNECT_SWAPPED);
      bd_document_open_with_mask (self->document, self->file, self->mask, self->device, self->seconds);
    }

  return self->document;
}

void
bd_batch_item_release_document (BdBatchItem *self)
{
  g_return_if_fail (BD_IS_BATCH_ITEM (self));

  if (self->document == NULL || bd_document_get_can_undo (self->document) ||
      bd_document_get_can_redo (self->document))
    return;

  g_signal_handlers_disconnect_by_data (self->document, self);
  g_clear_object (&self->document);
}

BdDocument *
bd_batch_item_get_document (BdBatchItem *self)
{
  return self->document;
}

gboolean
bd_batch_item_get_modified (BdBatchItem *self)
{
  return self->document != NULL && bd_document_get_modified (self->document);
}

void
bd_batch_item_set_state (BdBatchItem      *self,
                         BdBatchItemState  state,
                         const char       *message)
{
  g_return_if_fail (BD_IS_BATCH_ITEM (self));

  g_object_freeze_notify (G_OBJECT (self));
  if (g_strcmp0 (self->message, message) != 0)
    {
      g_free (self->message);
      self->message = g_strdup (message);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MESSAGE]);
    }
  if (self->state != state)
    {
      self->state = state;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
    }
  g_object_thaw_notify (G_OBJECT (self));
}

void
bd_batch_item_set_progress (BdBatchItem *self,
                            double       progress)
{
  g_return_if_fail (BD_IS_BATCH_ITEM (self));

  self->progress = progress;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROGRESS]);
}

void
bd_batch_item_set_result (BdBatchItem *self,
                          GBytes      *mask,
                          GdkTexture  *thumbnail,
                          const char  *device,
                          double       seconds)
{
  g_return_if_fail (BD_IS_BATCH_ITEM (self));

  g_clear_pointer (&self->mask, g_bytes_unref);
  self->mask = g_bytes_ref (mask);
  g_set_object (&self->thumbnail, thumbnail);
  g_free (self->device);
  self->device = g_strdup (device);
  self->seconds = seconds;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_THUMBNAIL]);
}

static void
bd_batch_item_finalize (GObject *object)
{
  BdBatchItem *self = BD_BATCH_ITEM (object);

  if (self->document != NULL)
    g_signal_handlers_disconnect_by_data (self->document, self);
  g_clear_object (&self->document);
  g_clear_object (&self->file);
  g_clear_object (&self->thumbnail);
  g_clear_pointer (&self->mask, g_bytes_unref);
  g_free (self->title);
  g_free (self->message);
  g_free (self->device);

  G_OBJECT_CLASS (bd_batch_item_parent_class)->finalize (object);
}

static void
bd_batch_item_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  BdBatchItem *self = BD_BATCH_ITEM (object);

  switch (prop_id)
    {
    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;

    case PROP_PROGRESS:
      g_value_set_double (value, self->progress);
      break;

    case PROP_MESSAGE:
      g_value_set_string (value, self->message);
      break;

    case PROP_THUMBNAIL:
      g_value_set_object (value, self->thumbnail);
      break;

    case PROP_MODIFIED:
      g_value_set_boolean (value, bd_batch_item_get_modified (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_batch_item_class_init (BdBatchItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = bd_batch_item_finalize;
  object_class->get_property = bd_batch_item_get_property;

  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL, BD_TYPE_BATCH_ITEM_STATE, BD_BATCH_ITEM_WAITING, ro);
  properties[PROP_PROGRESS] = g_param_spec_double ("progress", NULL, NULL, 0, 1, 0, ro);
  properties[PROP_MESSAGE] = g_param_spec_string ("message", NULL, NULL, NULL, ro);
  properties[PROP_THUMBNAIL] = g_param_spec_object ("thumbnail", NULL, NULL, GDK_TYPE_TEXTURE, ro);
  properties[PROP_MODIFIED] = g_param_spec_boolean ("modified", NULL, NULL, FALSE, ro);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
bd_batch_item_init (BdBatchItem *self)
{
}
