/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <glib/gi18n.h>

#include "backdrop.h"
#include "bd-engine.h"
#include "bd-library.h"
#include "bd-pixels.h"

struct _BdEngine
{
  GObject     parent_instance;

  char       *model_path;

  /* Short-lived: the setting and what ran last, read by workers, written by either side. */
  GMutex      lock;
  char       *device;
  int         gpu_index;
  char       *description;
  gboolean    all_people;

  /* Held for a whole run: everything below belongs to whichever worker holds it. */
  GMutex      run_lock;
  bd_model   *model;
  bd_session *session;
  char       *session_device;   /* the settings the session was made with */
  int         session_gpu_index;
};

G_DEFINE_FINAL_TYPE (BdEngine, bd_engine, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_MODEL_PATH,
  PROP_DEVICE,
  PROP_GPU_INDEX,
  PROP_ALL_PEOPLE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

typedef struct
{
  GdkPixbuf     *photo;
  BdProgressFunc progress;
  GObject       *target;
  GMainContext  *context;
  GCancellable  *cancellable;
  float          reported;
} SegmentData;

typedef struct
{
  BdProgressFunc progress;
  GObject       *target;
  double         fraction;
} ProgressUpdate;

void
bd_segmentation_free (BdSegmentation *segmentation)
{
  g_clear_pointer (&segmentation->alpha, g_bytes_unref);
  g_free (segmentation->device);
  g_free (segmentation);
}

static void
segment_data_free (SegmentData *data)
{
  g_clear_object (&data->photo);
  g_clear_object (&data->target);
  g_clear_object (&data->cancellable);
  g_main_context_unref (data->context);
  g_free (data);
}

static gboolean
progress_update_dispatch (gpointer user_data)
{
  ProgressUpdate *update = user_data;

  update->progress (update->target, update->fraction);
  return G_SOURCE_REMOVE;
}

static void
progress_update_free (gpointer user_data)
{
  ProgressUpdate *update = user_data;

  g_object_unref (update->target);
  g_free (update);
}

/* bd_progress_fn: runs in the worker; forwards to the caller's context now and then. */
static int
on_library_progress (float    fraction,
                     void    *user_data)
{
  SegmentData *data = user_data;

  if (g_cancellable_is_cancelled (data->cancellable))
    return 1;

  if (data->progress != NULL && (fraction - data->reported >= 0.01f || fraction >= 1.0f))
    {
      ProgressUpdate *update = g_new0 (ProgressUpdate, 1);
      GSource *source = g_idle_source_new ();

      data->reported = fraction;
      update->progress = data->progress;
      update->target = g_object_ref (data->target);
      update->fraction = fraction;
      /* A source, not g_main_context_invoke(): that one runs it right here on the worker
       * whenever no thread holds the context (between a caller's iterations). */
      g_source_set_priority (source, G_PRIORITY_DEFAULT);
      g_source_set_callback (source, progress_update_dispatch, update, progress_update_free);
      g_source_attach (source, data->context);
      g_source_unref (source);
    }

  return 0;
}

static bd_device
device_from_setting (const char *device)
{
  if (g_strcmp0 (device, "gpu") == 0)
    return BD_DEVICE_CUDA;
  if (g_strcmp0 (device, "cpu") == 0)
    return BD_DEVICE_CPU;
  return BD_DEVICE_AUTO;
}

/* With self->run_lock held: the model and a session for the current device setting. */
static gboolean
bd_engine_prepare_locked (BdEngine  *self,
                          GError   **error)
{
  bd_session_options options;
  g_autofree char *device = NULL;
  int gpu_index;

  if (self->model == NULL)
    {
      /* The CLI's and the plug-in's words for the same bad model (common/bd-library.c). */
      if (!bd_library_open_model (self->model_path, &self->model, error))
        return FALSE;
    }

  g_mutex_lock (&self->lock);
  device = g_strdup (self->device);
  gpu_index = self->gpu_index;
  g_mutex_unlock (&self->lock);

  if (self->session != NULL && g_strcmp0 (self->session_device, device) == 0 &&
      self->session_gpu_index == gpu_index)
    return TRUE;

  g_clear_pointer (&self->session, bd_session_free);
  bd_session_options_init (&options);
  options.device = device_from_setting (device);
  options.device_index = gpu_index;

  if (!bd_library_new_session (self->model, &options, &self->session, error))
    {
      /* The runtime's own words ("CUDA driver version is insufficient...") help nobody
       * here; they go to the debug log. */
      if (options.device == BD_DEVICE_CUDA && error != NULL &&
          g_error_matches (*error, BD_LIBRARY_ERROR, BD_ERR_DEVICE))
        {
          g_debug ("no GPU session: %s", (*error)->message);
          g_clear_error (error);
          g_set_error_literal (error, BD_LIBRARY_ERROR, BD_ERR_DEVICE,
                               gpu_index == 0
                                 ? _("No usable NVIDIA graphics card was found: its driver may be missing "
                                     "or too old. Choose “Automatic” or “Processor” in Preferences.")
                                 : _("The graphics card chosen in Preferences cannot be used: it may be "
                                     "missing, or its driver too old. Choose another card, or “Processor”."));
        }
      return FALSE;
    }

  g_free (self->session_device);
  self->session_device = g_steal_pointer (&device);
  self->session_gpu_index = gpu_index;

  g_mutex_lock (&self->lock);
  g_free (self->description);
  self->description = g_strdup (bd_session_device_description (self->session));
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
bd_engine_segment_thread (GTask        *task,
                          gpointer      source_object,
                          gpointer      task_data,
                          GCancellable *cancellable)
{
  BdEngine *self = source_object;
  SegmentData *data = task_data;
  g_autoptr(GMutexLocker) locker = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(BdSegmentation) result = NULL;
  bd_run_options options;
  bd_error bd_err = { 0 };
  bd_image view;
  guint8 *alpha;
  gsize size;
  gint64 start;

  locker = g_mutex_locker_new (&self->run_lock);

  if (g_task_return_error_if_cancelled (task))
    return;

  if (!bd_engine_prepare_locked (self, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  if (!bd_pixbuf_view (data->photo, &view, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  size = (gsize) view.width * view.height;
  alpha = g_try_malloc (size);
  if (alpha == NULL)
    {
      g_task_return_new_error (task, BD_LIBRARY_ERROR, BD_ERR_NO_MEMORY,
                               _("There is not enough memory for this photo."));
      return;
    }

  bd_run_options_init (&options);
  options.progress = on_library_progress;
  options.user_data = data;
  g_mutex_lock (&self->lock);
  options.main_subject_only = !self->all_people;
  g_mutex_unlock (&self->lock);
  /* The network's mask stays soft here, to show where it was unsure; the document makes it
   * decisive when it composes (bd_mask_make_decisive), as bd_session_run would have. */
  options.decisive = 0;

  start = g_get_monotonic_time ();
  if (!bd_pixels_check (bd_session_run (self->session, &view, &options, alpha, view.width, &bd_err),
                        &bd_err, &error))
    {
      g_free (alpha);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  result = g_new0 (BdSegmentation, 1);
  result->seconds = (g_get_monotonic_time () - start) / (double) G_USEC_PER_SEC;
  result->alpha = g_bytes_new_take (alpha, size);
  result->device = g_strdup (bd_session_device_description (self->session));

  g_task_return_pointer (task, g_steal_pointer (&result), (GDestroyNotify) bd_segmentation_free);
}

void
bd_engine_segment_async (BdEngine            *self,
                         GdkPixbuf           *photo,
                         BdProgressFunc       progress,
                         GObject             *progress_target,
                         GCancellable        *cancellable,
                         GAsyncReadyCallback  callback,
                         gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  SegmentData *data;

  g_return_if_fail (BD_IS_ENGINE (self));
  g_return_if_fail (GDK_IS_PIXBUF (photo));
  g_return_if_fail (progress == NULL || G_IS_OBJECT (progress_target));

  data = g_new0 (SegmentData, 1);
  data->photo = g_object_ref (photo);
  data->progress = progress;
  data->target = progress_target ? g_object_ref (progress_target) : NULL;
  data->context = g_main_context_ref_thread_default ();
  data->cancellable = cancellable ? g_object_ref (cancellable) : g_cancellable_new ();

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_engine_segment_async);
  g_task_set_task_data (task, data, (GDestroyNotify) segment_data_free);
  g_task_set_return_on_cancel (task, FALSE);
  g_task_run_in_thread (task, bd_engine_segment_thread);
}

BdSegmentation *
bd_engine_segment_finish (BdEngine      *self,
                          GAsyncResult  *result,
                          GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

BdEngine *
bd_engine_new (const char *model_path)
{
  /* None given: the programs' shared rule (bd-library.h). */
  g_autofree char *fallback = model_path ? NULL : bd_library_default_model ();

  return g_object_new (BD_TYPE_ENGINE,
                       "model-path", model_path ? model_path : fallback,
                       NULL);
}

const char *
bd_engine_get_model_path (BdEngine *self)
{
  g_return_val_if_fail (BD_IS_ENGINE (self), NULL);

  return self->model_path;
}

const char *
bd_engine_get_device (BdEngine *self)
{
  g_return_val_if_fail (BD_IS_ENGINE (self), NULL);

  return self->device;
}

void
bd_engine_set_device (BdEngine   *self,
                      const char *device)
{
  g_return_if_fail (BD_IS_ENGINE (self));

  if (device == NULL)
    device = "auto";

  /* Workers read the setting under the lock; the main thread is its only writer, so it may
   * read it without. The next run makes a new session. */
  if (g_strcmp0 (self->device, device) == 0)
    return;

  g_mutex_lock (&self->lock);
  g_free (self->device);
  self->device = g_strdup (device);
  g_mutex_unlock (&self->lock);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEVICE]);
}

int
bd_engine_get_gpu_index (BdEngine *self)
{
  g_return_val_if_fail (BD_IS_ENGINE (self), 0);

  return self->gpu_index;
}

/* Which NVIDIA card, numbered from 0 as CUDA does; the next run makes a new session. */
void
bd_engine_set_gpu_index (BdEngine *self,
                         int       gpu_index)
{
  g_return_if_fail (BD_IS_ENGINE (self));
  g_return_if_fail (gpu_index >= 0);

  if (self->gpu_index == gpu_index)
    return;

  g_mutex_lock (&self->lock);
  self->gpu_index = gpu_index;
  g_mutex_unlock (&self->lock);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GPU_INDEX]);
}

gboolean
bd_engine_get_all_people (BdEngine *self)
{
  g_return_val_if_fail (BD_IS_ENGINE (self), FALSE);

  return self->all_people;
}

void
bd_engine_set_all_people (BdEngine *self,
                          gboolean  all_people)
{
  g_return_if_fail (BD_IS_ENGINE (self));

  all_people = !!all_people;
  if (self->all_people == all_people)
    return;

  g_mutex_lock (&self->lock);
  self->all_people = all_people;
  g_mutex_unlock (&self->lock);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ALL_PEOPLE]);
}

char *
bd_engine_dup_device_description (BdEngine *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return g_strdup (self->description);
}

static void
bd_engine_finalize (GObject *object)
{
  BdEngine *self = BD_ENGINE (object);

  g_clear_pointer (&self->session, bd_session_free);
  g_clear_pointer (&self->model, bd_model_free);
  g_free (self->session_device);
  g_free (self->description);
  g_free (self->model_path);
  g_free (self->device);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->run_lock);

  G_OBJECT_CLASS (bd_engine_parent_class)->finalize (object);
}

static void
bd_engine_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  BdEngine *self = BD_ENGINE (object);

  switch (prop_id)
    {
    case PROP_MODEL_PATH:
      g_value_set_string (value, self->model_path);
      break;

    case PROP_DEVICE:
      g_value_set_string (value, self->device);
      break;

    case PROP_GPU_INDEX:
      g_value_set_int (value, self->gpu_index);
      break;

    case PROP_ALL_PEOPLE:
      g_value_set_boolean (value, self->all_people);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_engine_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  BdEngine *self = BD_ENGINE (object);

  switch (prop_id)
    {
    case PROP_MODEL_PATH:
      self->model_path = g_value_dup_string (value);
      break;

    case PROP_DEVICE:
      bd_engine_set_device (self, g_value_get_string (value));
      break;

    case PROP_GPU_INDEX:
      bd_engine_set_gpu_index (self, g_value_get_int (value));
      break;

    case PROP_ALL_PEOPLE:
      bd_engine_set_all_people (self, g_value_get_boolean (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_engine_class_init (BdEngineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = bd_engine_finalize;
  object_class->get_property = bd_engine_get_property;
  object_class->set_property = bd_engine_set_property;

  properties[PROP_MODEL_PATH] =
    g_param_spec_string ("model-path", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_DEVICE] =
    g_param_spec_string ("device", NULL, NULL, "auto",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_GPU_INDEX] =
    g_param_spec_int ("gpu-index", NULL, NULL, 0, G_MAXINT, 0,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* FALSE: the library leaves out people far smaller than the main subject (passers-by). */
  properties[PROP_ALL_PEOPLE] =
    g_param_spec_boolean ("all-people", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
bd_engine_init (BdEngine *self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->run_lock);
  self->device = g_strdup ("auto");
}
