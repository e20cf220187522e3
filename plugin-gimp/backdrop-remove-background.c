/* SPDX-License-Identifier: Apache-2.0 */
/* Backdrop: "Remove Background…" for GIMP 3.
 *
 * One image procedure, plug-in-backdrop-remove-background, in Layer ▸ Transparency. It runs
 * libbackdrop on every selected layer, then writes the result as a layer mask (the default),
 * into the layer's alpha, as a new cut-out layer, or as the selection, all in one undo step.
 *
 * Every layer is segmented before anything in the image changes: GIMP cancels a plug-in by
 * ending its process, so a cancelled run leaves the image as it was.
 */

#include "config.h"

#include <string.h>

#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>
#include <glib/gi18n-lib.h>

#include "backdrop.h"
#include "bd-library.h"
#include "preview.h"
#include "segment-layers.h"

#define PLUG_IN_PROC   "plug-in-backdrop-remove-background"
/* The same, found under Select ▸ Person, with the selection as its output. */
#define SELECT_PROC    "plug-in-backdrop-select-person"
#define PLUG_IN_BINARY "backdrop-remove-background"

typedef enum
{
  OUTPUT_MASK,
  OUTPUT_ALPHA,
  OUTPUT_LAYER,
  OUTPUT_SELECTION,
} Output;

#define BACKDROP_TYPE_PLUG_IN (backdrop_plug_in_get_type ())
G_DECLARE_FINAL_TYPE (BackdropPlugIn, backdrop_plug_in, BACKDROP, PLUG_IN, GimpPlugIn)

struct _BackdropPlugIn
{
  GimpPlugIn parent_instance;
};

static GList          * backdrop_query_procedures (GimpPlugIn           *plug_in);
static GimpProcedure  * backdrop_create_procedure (GimpPlugIn           *plug_in,
                                                   const gchar          *name);
static gboolean         backdrop_set_i18n         (GimpPlugIn           *plug_in,
                                                   const gchar          *procedure_name,
                                                   gchar               **gettext_domain,
                                                   gchar               **catalog_dir);

static gchar          * model_path                (GimpProcedureConfig  *config);
static GimpValueArray * remove_background_run     (GimpProcedure        *procedure,
                                                   GimpRunMode           run_mode,
                                                   GimpImage            *image,
                                                   GimpDrawable        **drawables,
                                                   GimpProcedureConfig  *config,
                                                   gpointer              run_data);

G_DEFINE_TYPE (BackdropPlugIn, backdrop_plug_in, GIMP_TYPE_PLUG_IN)

GIMP_MAIN (BACKDROP_TYPE_PLUG_IN)


static void
backdrop_plug_in_class_init (BackdropPlugInClass *klass)
{
  GimpPlugInClass *plug_in_class = GIMP_PLUG_IN_CLASS (klass);

  plug_in_class->query_procedures = backdrop_query_procedures;
  plug_in_class->create_procedure = backdrop_create_procedure;
  plug_in_class->set_i18n         = backdrop_set_i18n;
}

static void
backdrop_plug_in_init (BackdropPlugIn *plug_in)
{
}

static GList *
backdrop_query_procedures (GimpPlugIn *plug_in)
{
  return g_list_append (g_list_append (NULL, g_strdup (PLUG_IN_PROC)), g_strdup (SELECT_PROC));
}

/* Our strings live in Backdrop's own catalogue, installed with the rest of Backdrop, not in
 * the plug-in's folder where GIMP would look: bind it ourselves. */
static gboolean
backdrop_set_i18n (GimpPlugIn   *plug_in,
                   const gchar  *procedure_name,
                   gchar       **gettext_domain,
                   gchar       **catalog_dir)
{
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");

  return FALSE;
}

static GimpProcedure *
backdrop_create_procedure (GimpPlugIn  *plug_in,
                           const gchar *name)
{
  GimpProcedure *procedure;
  gboolean       select = g_strcmp0 (name, SELECT_PROC) == 0;

  if (g_strcmp0 (name, PLUG_IN_PROC) != 0 && ! select)
    return NULL;

  procedure = gimp_image_procedure_new (plug_in, name, GIMP_PDB_PROC_TYPE_PLUGIN,
                                        remove_background_run, NULL, NULL);

  gimp_procedure_set_image_types (procedure, "RGB*, GRAY*");
  gimp_procedure_set_sensitivity_mask (procedure,
                                       GIMP_PROCEDURE_SENSITIVE_DRAWABLE |
                                       GIMP_PROCEDURE_SENSITIVE_DRAWABLES);

  /* Where GIMP users look: beside Color to Alpha under Layer ▸ Transparency, among the
   * filters, and (selecting the people) in the Select menu beside By Color. */
  if (select)
    {
      gimp_procedure_set_menu_label (procedure, _("_Person…"));
      gimp_procedure_add_menu_path (procedure, "<Image>/Select");
      gimp_procedure_set_documentation (procedure,
                                        _("Select the people in the photo"),
                                        _("Finds the people in each selected layer with "
                                          "Backdrop's neural network, on the GPU when there "
                                          "is one, and selects them, with soft edges."),
                                        name);
    }
  else
    {
      gimp_procedure_set_menu_label (procedure, _("Remove _Background…"));
      gimp_procedure_add_menu_path (procedure, "<Image>/Layer/Transparency");
      gimp_procedure_add_menu_path (procedure, "<Image>/Filters/Generic");
      gimp_procedure_set_documentation (procedure,
                                        _("Remove the background behind people"),
                                        _("Finds the people in each selected layer with "
                                          "Backdrop's neural network, on the GPU when there "
                                          "is one, and hides everything else: through a layer "
                                          "mask (the default, nothing is lost), in the layer's "
                                          "alpha channel, in a new cut-out layer above it, or "
                                          "as the selection. The mask has the layer's full "
                                          "resolution."),
                                        name);
    }

  gimp_procedure_set_attribution (procedure, "The Backdrop authors", "The Backdrop authors",
                                  "2025");

  gimp_procedure_add_choice_argument (procedure, "output",
                                      _("_Output"),
                                      _("Where the result goes"),
                                      gimp_choice_new_with_values (
                                        "mask",      OUTPUT_MASK,      _("Layer mask"),                 NULL,
                                        "alpha",     OUTPUT_ALPHA,     _("Apply to alpha channel"),     NULL,
                                        "layer",     OUTPUT_LAYER,     _("New layer with the cut-out"), NULL,
                                        "selection", OUTPUT_SELECTION, _("Selection"),                  NULL,
                                        NULL),
                                      select ? "selection" : "mask", G_PARAM_READWRITE);

  gimp_procedure_add_boolean_argument (procedure, "refine-edges",
                                       _("_Refine edges"),
                                       _("Follow hair and fine edges of the full-size photo "
                                         "when enlarging the network's mask"),
                                       TRUE, G_PARAM_READWRITE);

  gimp_procedure_add_boolean_argument (procedure, "all-people",
                                       _("_Keep passers-by"),
                                       _("Keep every person found; otherwise people far "
                                         "smaller than the main subject and apart from it "
                                         "(passers-by) are left out of the mask"),
                                       FALSE, G_PARAM_READWRITE);

  gimp_procedure_add_double_argument (procedure, "threshold",
                                      _("_Threshold"),
                                      _("0 keeps the soft mask; above 0, pixels at least this "
                                        "likely to be a person become opaque and the rest "
                                        "transparent"),
                                      0.0, 1.0, 0.0, G_PARAM_READWRITE);

  gimp_procedure_add_double_argument (procedure, "feather",
                                      _("_Feather"),
                                      _("Soften the mask's edge by this many pixels"),
                                      0.0, 100.0, 0.0, G_PARAM_READWRITE);

  gimp_procedure_add_choice_argument (procedure, "device",
                                      _("_Device"),
                                      _("Where the network runs: Auto takes the GPU when a "
                                        "usable one is there"),
                                      gimp_choice_new_with_values (
                                        "auto", BD_DEVICE_AUTO, _("Auto"), NULL,
                                        "gpu",  BD_DEVICE_CUDA, _("GPU"),  NULL,
                                        "cpu",  BD_DEVICE_CPU,  _("CPU"),  NULL,
                                        NULL),
                                      "auto", G_PARAM_READWRITE);

  gimp_procedure_add_int_argument (procedure, "gpu-index",
                                   _("Graphics _card"),
                                   _("Which NVIDIA GPU Auto and GPU use, numbered from 0 as "
                                     "nvidia-smi shows them"),
                                   0, 63, 0, G_PARAM_READWRITE);

  /* ANY, not OPEN: a missing file then reaches the library, which says what is wrong,
   * instead of GIMP rejecting the argument as "out of range". */
  gimp_procedure_add_file_argument (procedure, "model",
                                    _("_Model"),
                                    _("A Backdrop model file (.bdm); none: the installed "
                                      "model, or $BACKDROP_MODEL when set"),
                                    GIMP_FILE_CHOOSER_ACTION_ANY, TRUE, NULL,
                                    G_PARAM_READWRITE);

  return procedure;
}


/* ---- the dialog ------------------------------------------------------------------------ */

static gboolean
remove_background_dialog (GimpProcedure       *procedure,
                          GimpProcedureConfig *config,
                          GimpDrawable        *drawable)
{
  GimpProcedureDialog *dialog;
  GtkWidget           *preview;
  gchar               *path;
  gboolean             run;
  gint                 gpu_index;
  const gchar         *gpu_choice;
  gboolean             select = g_strcmp0 (gimp_procedure_get_name (procedure), SELECT_PROC) == 0;

  gimp_ui_init (PLUG_IN_BINARY);

  dialog = GIMP_PROCEDURE_DIALOG (gimp_procedure_dialog_new (procedure, config,
                                                              select ? _("Select Person")
                                                                     : _("Remove Background")));

  gimp_procedure_dialog_get_widget (dialog, "output", GIMP_TYPE_INT_RADIO_FRAME);
  gimp_procedure_dialog_get_spin_scale (dialog, "threshold", 1.0);
  gimp_procedure_dialog_get_spin_scale (dialog, "feather", 1.0);

  gimp_procedure_dialog_fill_box (dialog, "edges-box",
                                  "refine-edges", "threshold", "feather", NULL);
  gimp_procedure_dialog_get_label (dialog, "edges-label", _("Edges"), FALSE, FALSE);
  gimp_procedure_dialog_fill_frame (dialog, "edges-frame", "edges-label", FALSE,
                                    "edges-box");

  /* Select ▸ Person always makes a selection: its menu item says so. The card is offered where
   * there is a choice of cards, or one chosen earlier is not there now. */
  g_object_get (config, "gpu-index", &gpu_index, NULL);
  gpu_choice = bd_device_count (BD_DEVICE_CUDA) > 1 || gpu_index != 0 ? "gpu-index" : NULL;
  if (select)
    gimp_procedure_dialog_fill (dialog, "edges-frame", "all-people", "device", gpu_choice, NULL);
  else
    gimp_procedure_dialog_fill (dialog, "output", "edges-frame", "all-people", "device", gpu_choice, NULL);

  /* The first layer's preview above the settings (preview.c). */
  path    = model_path (config);
  preview = bd_preview_new (drawable, config, path);
  g_free (path);
  gtk_box_pack_start (GTK_BOX (gtk_dialog_get_content_area (GTK_DIALOG (dialog))), preview, TRUE, TRUE, 0);
  gtk_box_reorder_child (GTK_BOX (gtk_dialog_get_content_area (GTK_DIALOG (dialog))), preview, 0);

  run = gimp_procedure_dialog_run (dialog);
  gtk_widget_destroy (GTK_WIDGET (dialog));

  return run;
}


/* ---- pixels ---------------------------------------------------------------------------- */

/* @format's components and colour space with another component type: "u8" keeps a mask's
 * own encoding (linear "Y" stays linear), "float" edits any precision without loss. */
static const Babl *
format_with_type (const Babl  *format,
                  const gchar *type)
{
  const Babl *model = babl_format_get_model (format);
  gchar      *name  = g_strdup_printf ("%s %s", babl_get_name (model), type);
  const Babl *result;

  if (babl_format_exists (name))
    result = babl_format_with_space (name, babl_format_get_space (format));
  else
    result = NULL;

  g_free (name);

  return result;
}

/* Writes @alpha (rows @stride apart) into @rect of a mask or channel, through its shadow
 * buffer so that replacing an existing mask can be undone. */
static void
write_mask (GimpDrawable        *drawable,
            const GeglRectangle *rect,
            const guint8        *alpha,
            gsize                stride)
{
  const Babl *format = format_with_type (gimp_drawable_get_format (drawable), "u8");
  GeglBuffer *shadow;

  if (! format)
    format = babl_format ("Y u8");

  shadow = gimp_drawable_get_shadow_buffer (drawable);
  gegl_buffer_set (shadow, rect, 0, format, alpha, stride);
  g_object_unref (shadow);

  gimp_drawable_merge_shadow (drawable, TRUE);
  gimp_drawable_update (drawable, rect->x, rect->y, rect->width, rect->height);
}

/* Multiplies the layer's alpha by @alpha, a band of rows at a time so that photos of any
 * size fit in memory, in float so that 16- and 32-bit layers lose nothing. */
static void
multiply_alpha (GimpDrawable *drawable,
                const guint8 *alpha)
{
  const Babl *format = format_with_type (gimp_drawable_get_format (drawable), "float");
  gint        width  = gimp_drawable_get_width (drawable);
  gint        height = gimp_drawable_get_height (drawable);
  gint        n, band;
  GeglBuffer *source, *shadow;
  gfloat     *rows;

  if (! format)
    format = babl_format ("R'G'B'A float");
  n    = babl_format_get_n_components (format);
  band = MAX (1, (gint) ((4 << 20) / ((gsize) width * n * sizeof (gfloat))));
  rows = g_new (gfloat, (gsize) width * n * MIN (band, height));

  source = gimp_drawable_get_buffer (drawable);
  shadow = gimp_drawable_get_shadow_buffer (drawable);

  for (gint y = 0; y < height; y += band)
    {
      GeglRectangle rect = { 0, y, width, MIN (band, height - y) };
      const guint8 *a    = alpha + (gsize) y * width;

      gegl_buffer_get (source, &rect, 1.0, format, rows, GEGL_AUTO_ROWSTRIDE,
                       GEGL_ABYSS_NONE);
      for (gsize i = 0; i < (gsize) width * rect.height; i++)
        rows[i * n + n - 1] *= a[i] * (1.0f / 255.0f);
      gegl_buffer_set (shadow, &rect, 0, format, rows, GEGL_AUTO_ROWSTRIDE);

      gimp_progress_pulse ();
    }

  g_free (rows);
  g_object_unref (shadow);
  g_object_unref (source);

  gimp_drawable_merge_shadow (drawable, TRUE);
  gimp_drawable_update (drawable, 0, 0, width, height);
}


/* ---- segmentation ---------------------------------------------------------------------- */

/* The model file: the procedure's argument, else NULL for the programs' default
 * (bd-library.h). */
static gchar *
model_path (GimpProcedureConfig *config)
{
  GFile       *file = NULL;
  gchar       *path = NULL;

  g_object_get (config, "model", &file, NULL);
  if (file)
    {
      path = g_file_get_path (file);
      g_object_unref (file);
    }

  return path;
}

static gboolean
segment (GimpProcedureConfig *config,
         Job                 *jobs,
         guint                n_jobs,
         Output               output,
         GError             **error)
{
  bd_model           *model   = NULL;
  bd_session         *session = NULL;
  bd_session_options  session_options;
  SegmentSettings     settings;
  gchar              *path    = model_path (config);
  gboolean            refine, all_people;
  gdouble             threshold, feather;
  gboolean            success = FALSE;

  g_object_get (config,
                "refine-edges", &refine,
                "all-people",   &all_people,
                "threshold",    &threshold,
                "feather",      &feather,
                NULL);

  gimp_progress_set_text (_("Loading the Backdrop model"));
  /* The same words as the CLI and the app for the same model (bd-library.h). */
  if (! bd_library_open_model (path, &model, error))
    goto out;

  bd_session_options_init (&session_options);
  session_options.device = gimp_procedure_config_get_choice_id (config, "device");
  g_object_get (config, "gpu-index", &session_options.device_index, NULL);
  if (! bd_library_new_session (model, &session_options, &session, error))
    goto out;

  settings.refine     = refine;
  settings.all_people = all_people;
  settings.threshold  = threshold;
  settings.feather    = feather;
  settings.selection  = output == OUTPUT_SELECTION;
  if (! segment_layers (session, &settings, jobs, n_jobs, error))
    goto out;

  success = TRUE;

out:
  bd_session_free (session);
  bd_model_free (model);
  g_free (path);

  return success;
}


/* ---- writing the result ---------------------------------------------------------------- */

static void
output_mask (Job *job)
{
  GimpLayerMask *mask = gimp_layer_get_mask (job->layer);
  GeglRectangle  rect = { 0, 0, job->width, job->height };

  /* Running again replaces the mask we (or the user) made before. */
  if (! mask)
    {
      mask = gimp_layer_create_mask (job->layer, GIMP_ADD_MASK_WHITE);
      gimp_layer_add_mask (job->layer, mask);
    }

  write_mask (GIMP_DRAWABLE (mask), &rect, job->alpha, job->width);
}

static void
output_alpha (GimpLayer *layer,
              Job       *job)
{
  if (! gimp_drawable_has_alpha (GIMP_DRAWABLE (layer)))
    gimp_layer_add_alpha (layer);

  multiply_alpha (GIMP_DRAWABLE (layer), job->alpha);
}

static void
output_layer (GimpImage *image,
              Job       *job)
{
  GimpLayer *copy = gimp_layer_copy (job->layer);
  /* TRANSLATORS: the name of the new layer; %s is the name of the layer it was cut from. */
  gchar     *name = g_strdup_printf (_("%s (cut-out)"), job->name);

  gimp_image_insert_layer (image, copy,
                           GIMP_LAYER (gimp_item_get_parent (GIMP_ITEM (job->layer))),
                           gimp_image_get_item_position (image, GIMP_ITEM (job->layer)));
  gimp_item_set_name (GIMP_ITEM (copy), name);
  g_free (name);

  output_alpha (copy, job);

  /* Hide the original so that the cut-out shows; it stays in the stack, untouched. */
  gimp_item_set_visible (GIMP_ITEM (job->layer), FALSE);
}

/* The union of every layer's person, at the layers' places in the image: each mask goes
 * into a temporary channel that GIMP adds to the selection. */
static void
output_selection (GimpImage *image,
                  Job       *jobs,
                  guint      n_jobs)
{
  GeglRectangle full  = { 0, 0, gimp_image_get_width (image), gimp_image_get_height (image) };
  GeglColor    *color = gegl_color_new ("black");

  gimp_selection_none (image);

  for (guint i = 0; i < n_jobs; i++)
    {
      Job          *job   = &jobs[i];
      GeglRectangle layer = { job->x, job->y, job->width, job->height };
      GeglRectangle rect;
      GimpChannel  *channel;

      if (! gegl_rectangle_intersect (&rect, &layer, &full))
        continue;

      channel = gimp_channel_new (image, "backdrop-person", full.width, full.height,
                                  50.0, color);
      gimp_image_insert_channel (image, channel, NULL, 0);
      write_mask (GIMP_DRAWABLE (channel), &rect,
                  job->alpha + (gsize) (rect.y - job->y) * job->width + (rect.x - job->x),
                  job->width);
      gimp_image_select_item (image, GIMP_CHANNEL_OP_ADD, GIMP_ITEM (channel));
      gimp_image_remove_channel (image, channel);
    }

  g_object_unref (color);
}


/* ---- the procedure --------------------------------------------------------------------- */

/* The selected layers, each once: a selected layer mask stands for its layer. */
static Job *
collect_jobs (GimpDrawable **drawables,
              Output         output,
              guint         *n_jobs,
              GError       **error)
{
  GArray *jobs = g_array_new (FALSE, TRUE, sizeof (Job));

  for (gint i = 0; drawables && drawables[i]; i++)
    {
      GimpLayer *layer = NULL;
      Job        job   = { 0 };
      gboolean   seen  = FALSE;

      if (GIMP_IS_LAYER_MASK (drawables[i]))
        layer = gimp_layer_from_mask (GIMP_LAYER_MASK (drawables[i]));
      else if (GIMP_IS_LAYER (drawables[i]))
        layer = GIMP_LAYER (drawables[i]);

      if (! layer)
        {
          g_autofree gchar *name = gimp_item_get_name (GIMP_ITEM (drawables[i]));

          g_set_error (error, GIMP_PLUG_IN_ERROR, 0,
                       _("“%s” is not a layer: select the layers to cut out."), name);
          goto fail;
        }

      for (guint j = 0; j < jobs->len; j++)
        seen |= g_array_index (jobs, Job, j).layer == layer;
      if (seen)
        continue;

      job.layer  = layer;
      job.name   = gimp_item_get_name (GIMP_ITEM (layer));
      job.width  = gimp_drawable_get_width (GIMP_DRAWABLE (layer));
      job.height = gimp_drawable_get_height (GIMP_DRAWABLE (layer));
      gimp_drawable_get_offsets (GIMP_DRAWABLE (layer), &job.x, &job.y);
      g_array_append_val (jobs, job);

      if ((output == OUTPUT_ALPHA || output == OUTPUT_LAYER) &&
          gimp_item_is_group (GIMP_ITEM (layer)))
        {
          g_set_error (error, GIMP_PLUG_IN_ERROR, 0,
                       _("“%s” is a layer group, whose pixels cannot be changed: use the "
                         "layer mask or selection output."), job.name);
          goto fail;
        }

      /* The words the CLI and the app use for a photo of this size (bd-library.h). */
      if (! bd_library_check_size (job.name, job.width, job.height, error))
        goto fail;
    }

  if (jobs->len == 0)
    {
      g_set_error_literal (error, GIMP_PLUG_IN_ERROR, 0,
                           _("Select one or more layers to cut out."));
      goto fail;
    }

  *n_jobs = jobs->len;
  return (Job *) g_array_free (jobs, FALSE);

fail:
  for (guint j = 0; j < jobs->len; j++)
    g_free (g_array_index (jobs, Job, j).name);
  g_array_free (jobs, TRUE);
  return NULL;
}

static void
free_jobs (Job   *jobs,
           guint  n_jobs)
{
  for (guint i = 0; jobs && i < n_jobs; i++)
    {
      g_free (jobs[i].alpha);
      g_free (jobs[i].name);
    }
  g_free (jobs);
}

static GimpValueArray *
remove_background_run (GimpProcedure        *procedure,
                       GimpRunMode           run_mode,
                       GimpImage            *image,
                       GimpDrawable        **drawables,
                       GimpProcedureConfig  *config,
                       gpointer              run_data)
{
  Output  output;
  Job    *jobs   = NULL;
  guint   n_jobs = 0;
  GError *error  = NULL;

  if (run_mode == GIMP_RUN_INTERACTIVE && drawables && drawables[0] &&
      ! remove_background_dialog (procedure, config, drawables[0]))
    return gimp_procedure_new_return_values (procedure, GIMP_PDB_CANCEL, NULL);

  output = gimp_procedure_config_get_choice_id (config, "output");

  gimp_progress_init (_("Removing the background"));

  jobs = collect_jobs (drawables, output, &n_jobs, &error);
  if (! jobs || ! segment (config, jobs, n_jobs, output, &error))
    {
      free_jobs (jobs, n_jobs);
      return gimp_procedure_new_return_values (procedure, GIMP_PDB_EXECUTION_ERROR, error);
    }

  gimp_progress_set_text (_("Applying the result"));
  gimp_image_undo_group_start (image);

  if (output == OUTPUT_SELECTION)
    output_selection (image, jobs, n_jobs);
  else
    for (guint i = 0; i < n_jobs; i++)
      switch (output)
        {
        case OUTPUT_MASK:  output_mask (&jobs[i]);                  break;
        case OUTPUT_ALPHA: output_alpha (jobs[i].layer, &jobs[i]); break;
        case OUTPUT_LAYER: output_layer (image, &jobs[i]);         break;
        default:           break;
        }

  gimp_image_undo_group_end (image);
  gimp_progress_update (1.0);
  gimp_progress_end ();
  /* Show the result now, not at the next redraw. */
  if (run_mode != GIMP_RUN_NONINTERACTIVE)
    gimp_displays_flush ();

  free_jobs (jobs, n_jobs);

  return gimp_procedure_new_return_values (procedure, GIMP_PDB_SUCCESS, NULL);
}
